package sharetest

import (
	"strconv"
	"strings"
)

// pythonScript is a child over Python's sqlite3 module, SQLite's C library:
//
//	python3 -u -c pythonScript ROLE PATH key=value...
//
// Roles, as the pagoda children's (children_test.go):
//
//   - writer: transfers as writer `who` in BEGIN IMMEDIATE transactions, on
//     its own until standard input ends, or one per line (driven=1),
//     printing "ack WHO N SEQ" after each COMMIT; SQLITE_BUSY at BEGIN
//     (the busy timeout passed) is tried again ("busy"); with probability
//     ckpt/1000 a PRAGMA wal_checkpoint of a random mode follows a commit;
//     autockpt sets wal_autocheckpoint.
//   - reader: reads the bank (one statement, or in a transaction held for
//     hold ms), checks every snapshot, prints "reads N SEQ" now and then,
//     or, driven, reads once per line and prints "state SUM SEQ ROWS"; any
//     error, SQLITE_BUSY included, is a failure.
//   - ckpt: PRAGMA wal_checkpoint(PASSIVE), then (TRUNCATE), and so on,
//     every `every` ms, printing "ckpt MODE BUSY LOG CKPT".
//
// timeout is the busy timeout in ms. Any other error prints "bad ..." with
// SQLite's error name and exits 2.
var pythonScript = strings.NewReplacer("@TOTAL@", strconv.Itoa(total), "@ACCOUNTS@", strconv.Itoa(accounts)).Replace(`
import os, random, sqlite3, sys, threading, time
role, path = sys.argv[1], sys.argv[2]
a = dict(x.split('=', 1) for x in sys.argv[3:])
TOTAL = @TOTAL@
ACCOUNTS = @ACCOUNTS@
Q = '''` + bankQuery + `'''

def say(s):
    os.write(1, (s + '\n').encode())

def fail(what, e):
    say('bad %s %s: %s %s: %s' % (role, a.get('who', ''), what, getattr(e, 'sqlite_errorname', type(e).__name__), e))
    sys.exit(2)

driven = a.get('driven') == '1'
stop = threading.Event()
if not driven:
    def watch():
        while sys.stdin.buffer.read1(256):
            pass
        stop.set()
    threading.Thread(target=watch, daemon=True).start()

def more():
    if driven:
        return sys.stdin.readline() != ''
    return not stop.is_set()

try:
    con = sqlite3.connect(path, timeout=int(a.get('timeout', '2000')) / 1000.0, isolation_level=None)
    if 'autockpt' in a:
        con.execute('PRAGMA wal_autocheckpoint=%d' % int(a['autockpt'])).fetchall()
except sqlite3.Error as e:
    fail('open', e)

def busy(e):
    return (getattr(e, 'sqlite_errorcode', 0) & 0xff) == 5

say('ready')
if role == 'writer':
    who = a['who']
    rnd = random.Random('%s/%s' % (a.get('seed', '1'), who))
    pad_max = int(a.get('pad', '2000'))
    ckpt = int(a.get('ckpt', '0'))
    n = 0
    while more():
        n += 1
        while True:
            try:
                con.execute('BEGIN IMMEDIATE')
            except sqlite3.OperationalError as e:
                if busy(e):
                    say('busy begin: %s' % e)
                    continue
                fail('begin %d' % n, e)
            break
        try:
            x = rnd.randrange(100)
            src = rnd.randrange(ACCOUNTS) + 1
            dst = rnd.randrange(ACCOUNTS - 1) + 1
            if dst >= src:
                dst += 1
            pad = rnd.randrange(pad_max + 1) if rnd.randrange(8) == 0 else rnd.randrange(min(pad_max, 600) + 1)
            con.execute('UPDATE acct SET bal=bal-? WHERE id=?', (x, src))
            con.execute('UPDATE acct SET bal=bal+? WHERE id=?', (x, dst))
            con.execute('UPDATE meta SET seq=seq+1 WHERE id=1')
            seq = con.execute('SELECT seq FROM meta WHERE id=1').fetchall()[0][0]
            con.execute('INSERT INTO log(who, n, seq, pad) VALUES(?, ?, ?, randomblob(?))', (who, n, seq, pad))
            con.execute('COMMIT')
        except sqlite3.Error as e:
            fail('transfer %d' % n, e)
        say('ack %s %d %d' % (who, n, seq))
        if ckpt and rnd.randrange(1000) < ckpt:
            mode = rnd.choice(['PASSIVE', 'FULL', 'RESTART', 'TRUNCATE'])
            try:
                r = con.execute('PRAGMA wal_checkpoint(%s)' % mode).fetchall()[0]
            except sqlite3.Error as e:
                if not busy(e):
                    fail('checkpoint ' + mode, e)
                r = ('busy', '', '')
            say('ckpt %s %s %s %s' % (mode, r[0], r[1], r[2]))
elif role == 'reader':
    hold = int(a.get('hold', '0')) / 1000.0
    last, reads, report = 0, 0, time.time()
    while more():
        try:
            if hold:
                con.execute('BEGIN')
                row = con.execute(Q).fetchall()[0]
                time.sleep(hold)
                con.execute('COMMIT')
            else:
                row = con.execute(Q).fetchall()[0]
        except sqlite3.Error as e:
            fail('read %d' % (reads + 1), e)
        s, seq, rows = row
        if s != TOTAL:
            say('bad reader: balances add up to %d, want %d (seq %d)' % (s, TOTAL, seq))
            sys.exit(2)
        if rows != seq:
            say('bad reader: seq %d but %d log rows' % (seq, rows))
            sys.exit(2)
        if seq < last:
            say('bad reader: seq %d after %d: back in time' % (seq, last))
            sys.exit(2)
        last = seq
        reads += 1
        if driven:
            say('state %d %d %d' % (s, seq, rows))
        elif time.time() - report > 0.25:
            say('reads %d %d' % (reads, last))
            report = time.time()
    say('reads %d %d' % (reads, last))
elif role == 'ckpt':
    every = int(a.get('every', '500')) / 1000.0
    i = 0
    while more():
        mode = ('PASSIVE', 'TRUNCATE')[i % 2]
        i += 1
        try:
            r = con.execute('PRAGMA wal_checkpoint(%s)' % mode).fetchall()[0]
        except sqlite3.Error as e:
            fail('checkpoint ' + mode, e)
        say('ckpt %s %d %d %d' % (mode, r[0], r[1], r[2]))
        stop.wait(every)
else:
    say('bad: no role %s' % role)
    sys.exit(2)
con.close()
say('closed')
`)
