//go:build !purego

#include "textflag.h"

// func prefetchLines(b []byte, n int) byte
TEXT ·prefetchLines(SB), NOSPLIT|NOFRAME, $0-33
	MOVD	b_base+0(FP), R0
	MOVD	n+24(FP), R1
	CMP	$0, R1
	BLE	done
loop:
	PRFM	(R0), PLDL1KEEP
	ADD	$64, R0
	SUB	$1, R1
	CBNZ	R1, loop
done:
	MOVB	ZR, ret+32(FP)
	RET

// func prefetch2(b []byte, off int) byte
TEXT ·prefetch2(SB), NOSPLIT|NOFRAME, $0-33
	MOVD	b_base+0(FP), R0
	MOVD	off+24(FP), R1
	ADD	R1, R0
	PRFM	(R0), PLDL1KEEP
	PRFM	64(R0), PLDL1KEEP
	MOVB	ZR, ret+32(FP)
	RET
