//go:build !purego

#include "textflag.h"

// func prefetchLines(b []byte, n int) byte
TEXT ·prefetchLines(SB), NOSPLIT|NOFRAME, $0-33
	MOVQ	b_base+0(FP), AX
	MOVQ	n+24(FP), CX
	TESTQ	CX, CX
	JLE	done
loop:
	PREFETCHT0	(AX)
	ADDQ	$64, AX
	DECQ	CX
	JNZ	loop
done:
	MOVB	$0, ret+32(FP)
	RET

// func prefetch2(b []byte, off int) byte
TEXT ·prefetch2(SB), NOSPLIT|NOFRAME, $0-33
	MOVQ	b_base+0(FP), AX
	ADDQ	off+24(FP), AX
	PREFETCHT0	(AX)
	PREFETCHT0	64(AX)
	MOVB	$0, ret+32(FP)
	RET
