package store

import (
	"bytes"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The ledger keeps balances in memory as the authority while this process
// owns the file: the committed value minus open reservations (what a new
// call may spend). What is shown (and what an administrator sets) is the
// balance as if no call were in flight, the spendable value plus the open
// reservations: it moves only by what calls are charged, and a balance set
// while calls are in flight ends, once they settle, at the set value minus
// their charges. Every settled
// call becomes one charge (its consume log plus its balance deltas); one
// writer groups concurrent charges into a single bbolt transaction, so the
// fsync cost is shared, and a caller waits until its charge is durable.
//
// Credits (registration gifts, invite transfers, top-ups, admin changes)
// commit first and then reach memory. A balance records the transaction it
// was read at, so a credit that a first load already read from the file is
// not added to it again (see updateBalances and readUnlocked).

// balanceDelta is a change to live balances that a transaction committed.
type balanceDelta struct {
	user    uint64
	quota   int64
	used    int64
	count   int64
	token   uint64
	remain  int64
	tokUsed int64
	// unlimited, when set, is the token's unlimited flag as committed.
	unlimited *bool
	// setN and remainSetN, when not 0, number the set of the user's quota
	// or the token's remaining quota this delta commits (see setFns).
	setN, remainSetN uint64
}

// liveBalance is one user's live balance: quota is what new calls may
// spend, held what open reservations hold.
type liveBalance struct {
	quota, used, count int64
	held               int64
	at                 int // the transaction the balance was read at
	// setFns numbers the sets of this balance (an administrator's quota)
	// as they are computed, setDone is the number of the last committed. A
	// set takes the charges already settled as made: one of them that then
	// cannot be written must not come back on top of the set value.
	setFns, setDone uint64
}

// shown is the balance as if no call were in flight.
func (b *liveBalance) shown() int64 { return b.quota + b.held }

// liveToken is one token's live balance; held is what open reservations
// hold of its remaining quota.
type liveToken struct {
	remain, used int64
	held         int64
	unlimited    bool
	at           int // the transaction the balance was read at
	// setFns and setDone: as liveBalance's, for sets of the remaining quota.
	setFns, setDone uint64
	// deleted: the token was deleted while calls held some of it; the
	// last of them to end takes it out of memory.
	deleted bool
}

func (t *liveToken) shown() int64 { return t.remain + t.held }

// Balance is a user's live balance as published after a charge.
type Balance struct {
	UserID       uint64
	Quota        int64
	UsedQuota    int64
	RequestCount int64
	// Seq orders the balances read: one read later than another has the
	// higher Seq and shows every change the earlier one showed.
	Seq uint64
}

type ledger struct {
	s        *Store
	mu       sync.Mutex
	users    map[uint64]*liveBalance
	tokens   map[uint64]*liveToken
	channels map[uint64]int64 // channel used quota, live
	// credits counts the credits applied to memory (updateBalances) and
	// the tokens deleted (forgetToken), so that a balance read from the
	// file without the lock can tell whether one was applied, or its token
	// deleted, meanwhile, while the balance was not yet there.
	credits uint64
	// readSeq counts the reads of live user balances that are published
	// (snapshots and user records). Every change to a balance is made
	// under mu, so of two reads the one with the higher number shows the
	// later state: a console keeps the balance of the highest it received,
	// whatever order the pushes arrive in. It starts at the opening time
	// in microseconds.
	readSeq uint64

	queue    chan *charge
	wg       sync.WaitGroup
	closed   atomic.Bool
	interval time.Duration // 0 = callers wait for their commit
}

// charge is one settled call on its way to the file.
type charge struct {
	userID, tokenID, channelID uint64
	quota                      int64
	// fromRemain is decided once, at Settle: whether the token pays from
	// its remaining quota (it was limited then). The commit and a revert
	// follow it, so memory and file agree even if the token's unlimited
	// flag changes before the commit.
	fromRemain bool
	// userSeen and tokenSeen are the balances' setFns at Settle: a set
	// numbered above them, committed, took this charge as made.
	userSeen, tokenSeen uint64
	log                 *Log // what the call was: model, user name, tokens
	writeLog            bool // consume logging is on
	dashboard           bool // dashboard data is collected
	done                chan error
}

func (l *ledger) init(s *Store) {
	l.s = s
	l.users = map[uint64]*liveBalance{}
	l.tokens = map[uint64]*liveToken{}
	l.channels = map[uint64]int64{}
	// Numbers keep growing across restarts: a console that holds one from
	// before (a tab without a live socket) takes the new process's reads.
	// Microseconds stay exact in a JavaScript number.
	l.readSeq = uint64(time.Now().UnixMicro())
	l.queue = make(chan *charge, 4096)
	l.wg.Add(1)
	go l.writer()
}

// close drains the queue and stops the writer.
func (l *ledger) close() {
	if l.closed.Swap(true) {
		return
	}
	close(l.queue)
	l.wg.Wait()
}

// loadUser returns the live balance of id, reading it from the file on first
// use. Callers hold l.mu; it may be released meanwhile (see readUnlocked).
func (l *ledger) loadUser(id uint64) (*liveBalance, error) {
	return loadLive(l, l.users, id, func(tx *bolt.Tx) (*liveBalance, error) {
		u, err := getUser(tx, id)
		if err != nil {
			return nil, err
		}
		return &liveBalance{quota: u.Quota, used: u.UsedQuota, count: u.RequestCount, at: tx.ID()}, nil
	})
}

func (l *ledger) loadToken(id uint64) (*liveToken, error) {
	return loadLive(l, l.tokens, id, func(tx *bolt.Tx) (*liveToken, error) {
		t, err := getToken(tx, id)
		if err != nil {
			return nil, err
		}
		return &liveToken{remain: t.RemainQuota, used: t.UsedQuota, unlimited: t.UnlimitedQuota, at: tx.ID()}, nil
	})
}

// loadLive returns m[id], building it with read from the file on first use.
func loadLive[V any](l *ledger, m map[uint64]*V, id uint64, read func(tx *bolt.Tx) (*V, error)) (*V, error) {
	var v *V
	for attempt := 0; ; attempt++ {
		if cur := m[id]; cur != nil {
			return cur, nil
		}
		ok, err := l.readUnlocked(attempt, func(tx *bolt.Tx) (err error) { v, err = read(tx); return })
		if err != nil {
			return nil, err
		}
		if ok {
			break
		}
	}
	if cur := m[id]; cur != nil { // loaded by another caller meanwhile
		return cur, nil
	}
	m[id] = v
	return v, nil
}

// readUnlocked runs read in a read transaction for a balance not yet in
// memory. The first attempts release l.mu meanwhile: a read can wait for
// the file's remap behind a long reader (a backup), and every call's
// authentication would wait with it. It reports whether no credit was
// applied to memory meanwhile (else the value read may miss it, as the
// credit found no balance to add to: read again); the last attempt keeps
// the lock, under which no credit is applied. A credit that commits during
// the read and is applied after it is added only if the read did not see
// it (the balance's at).
func (l *ledger) readUnlocked(attempt int, read func(tx *bolt.Tx) error) (bool, error) {
	if attempt >= 2 {
		return true, l.s.db.View(read)
	}
	before := l.credits
	l.mu.Unlock()
	err := l.s.db.View(read)
	l.mu.Lock()
	return err == nil && l.credits == before, err
}

// applyLocked adds the deltas committed by transaction txid to the loaded
// balances that were read before it.
func (l *ledger) applyLocked(ds []balanceDelta, txid int) {
	for _, d := range ds {
		if d.user != 0 {
			if b := l.users[d.user]; b != nil && b.at < txid {
				b.quota += d.quota
				b.used += d.used
				b.count += d.count
				b.setDone = max(b.setDone, d.setN)
			}
		}
		if d.token != 0 {
			if t := l.tokens[d.token]; t != nil && t.at < txid {
				t.remain += d.remain
				t.used += d.tokUsed
				t.setDone = max(t.setDone, d.remainSetN)
				if d.unlimited != nil {
					t.unlimited = *d.unlimited
				}
			}
		}
	}
}

// MaxQuota bounds every balance and every amount that is set or added to
// one: some 18 billion US$ at the default 500 000 a dollar, far beyond any
// real balance, and far from int64's end, so that sums cannot wrap around.
const MaxQuota = 1 << 53

// errQuotaTooLarge refuses an amount or a balance beyond MaxQuota.
var errQuotaTooLarge = Errorf(EINVALID, "额度不能超过 %d", int64(MaxQuota))

// errQuotaTooSmall refuses a balance or a taking below -MaxQuota.
var errQuotaTooSmall = Errorf(EINVALID, "额度不能低于 -%d", int64(MaxQuota))

// checkQuotaMagnitude refuses an amount beyond ±MaxQuota, naming the bound
// it passed.
func checkQuotaMagnitude(q int64) error {
	switch {
	case q > MaxQuota:
		return errQuotaTooLarge
	case q < -MaxQuota:
		return errQuotaTooSmall
	}
	return nil
}

// liveQuotaLocked is user u's balance as if no call were in flight (the
// committed value); the ledger lock is held.
func (l *ledger) liveQuotaLocked(u *User) int64 {
	if b := l.users[u.ID]; b != nil {
		return b.shown()
	}
	return u.Quota
}

// updateBalances runs fn in a write transaction, with the ledger lock held
// while fn reads the live balances, and applies the deltas fn returns to
// memory once the commit is made, before any other write transaction
// begins (so the next credit reads them). The lock is not held across the
// commit: charges and authentication go on during its fsync, and a call
// settled meanwhile counts as settled after the credit, as one settled
// right after it would. A balance first loaded from the file after the
// commit became visible already holds the credit and is left as read.
func (s *Store) updateBalances(fn func(tx *bolt.Tx) ([]balanceDelta, error)) error {
	l := &s.ledger
	var ds []balanceDelta
	var txid int
	err := s.updateThen(func(tx *bolt.Tx) (err error) {
		txid = tx.ID()
		l.mu.Lock()
		defer l.mu.Unlock()
		ds, err = fn(tx)
		return
	}, func() {
		l.mu.Lock()
		l.applyLocked(ds, txid)
		l.credits++
		l.mu.Unlock()
	})
	return wrapTx(err)
}

// overlay replaces the committed balance fields of u with the live ones.
func (l *ledger) overlay(u *User) {
	if u == nil {
		return
	}
	l.mu.Lock()
	// The balance is always the one in memory (loaded now if it is not
	// yet), so that every read numbered by readSeq is of the same state
	// credits and charges change under mu: a value read from the file
	// before the lock could be older than a later-numbered one.
	if b, err := l.loadUser(u.ID); err == nil {
		u.Quota, u.UsedQuota, u.RequestCount = b.shown(), b.used, b.count
		l.readSeq++
		u.BalanceSeq = l.readSeq
	}
	l.mu.Unlock()
}

func (l *ledger) overlayToken(t *Token) {
	if t == nil {
		return
	}
	l.mu.Lock()
	if lt := l.tokens[t.ID]; lt != nil {
		t.RemainQuota, t.UsedQuota = lt.shown(), lt.used
	}
	l.mu.Unlock()
}

func (l *ledger) overlayChannel(c *Channel) {
	if c == nil {
		return
	}
	l.mu.Lock()
	if used, ok := l.channels[c.ID]; ok {
		c.UsedQuota = used
	}
	l.mu.Unlock()
}

// Reservation is quota held for one call until it settles or is refunded.
type Reservation struct {
	UserID, TokenID uint64
	Amount          int64
	// tokenHeld records that Amount was taken from the token's remaining
	// quota. Settle and Refund give back exactly what was held, even if the
	// token became unlimited (or limited) while the call was in flight.
	tokenHeld bool
	done      atomic.Bool
}

// Reserve holds amount against the user and, unless tokenID is 0 or the
// token is unlimited, against the token. It fails without holding anything
// when either cannot cover it. Errors: EQUOTA, ENOTFOUND.
func (s *Store) Reserve(userID, tokenID uint64, amount int64) (*Reservation, error) {
	if amount < 0 {
		amount = 0
	}
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	u, err := l.loadUser(userID)
	if err != nil {
		return nil, err
	}
	var t *liveToken
	if tokenID != 0 {
		if t, err = l.loadToken(tokenID); err != nil {
			return nil, err
		}
	}
	if u.quota <= 0 || u.quota < amount {
		return nil, Errorf(EQUOTA, "用户额度不足")
	}
	if t != nil && !t.unlimited && (t.remain <= 0 || t.remain < amount) {
		return nil, Errorf(EQUOTA, "令牌额度不足")
	}
	u.quota -= amount
	u.held += amount
	held := t != nil && !t.unlimited
	if held {
		t.remain -= amount
		t.held += amount
	}
	return &Reservation{UserID: userID, TokenID: tokenID, Amount: amount, tokenHeld: held}, nil
}

// Refund returns a reservation's quota. Only the first Refund or Settle of a
// reservation has any effect.
func (s *Store) Refund(r *Reservation) {
	if r == nil || r.done.Swap(true) {
		return
	}
	l := &s.ledger
	l.mu.Lock()
	if u := l.users[r.UserID]; u != nil {
		u.quota += r.Amount
		u.held -= r.Amount
	}
	if r.tokenHeld {
		if t := l.tokens[r.TokenID]; t != nil {
			t.remain += r.Amount
			t.held -= r.Amount
		}
	}
	l.dropDeletedLocked(r.TokenID)
	l.mu.Unlock()
}

// forgetToken takes a deleted token's live balance out of memory, at once
// when no call holds any of it, else when the last such call ends: a
// deleted token is never read again, and tokens that come and go (one per
// customer, say) must not grow memory for as long as the process runs.
func (l *ledger) forgetToken(id uint64) {
	l.mu.Lock()
	// A call loading the token without the lock may have read it before
	// the delete: it reads again, and finds it deleted, instead of putting
	// it back in memory for good (and holding quota of a deleted token).
	l.credits++
	if t := l.tokens[id]; t != nil {
		t.deleted = true
		l.dropDeletedLocked(id)
	}
	l.mu.Unlock()
}

// dropDeletedLocked removes token id from memory once it is deleted and no
// call holds any of it; l.mu is held.
func (l *ledger) dropDeletedLocked(id uint64) {
	if t := l.tokens[id]; t != nil && t.deleted && t.held <= 0 {
		delete(l.tokens, id)
	}
}

// ErrAlreadySettled is returned when a reservation is settled twice.
var ErrAlreadySettled = errors.New("reservation already settled")

// Settle turns a reservation into the final charge of quota for the call;
// log describes the call and is written when LogConsumeEnabled is on, and
// folded into the dashboard's hourly data when DataExportEnabled is on. The live
// balances move at once; the file follows in the writer's next transaction.
// Settle returns when the charge is committed (unless the ledger runs with a
// sync interval, then at once). The final charge may take a balance below
// zero by at most what the call used beyond its reservation.
func (s *Store) Settle(r *Reservation, channelID uint64, quota int64, log *Log) error {
	if r == nil || r.done.Swap(true) {
		return ErrAlreadySettled
	}
	if quota < 0 {
		quota = 0
	}
	l := &s.ledger
	l.mu.Lock()
	delta := quota - r.Amount
	var userSeen, tokenSeen uint64
	if u := l.users[r.UserID]; u != nil {
		userSeen = u.setFns
		u.quota -= delta
		u.held -= r.Amount
		u.used += quota
		u.count++
	}
	fromRemain := false
	if r.TokenID != 0 {
		if t := l.tokens[r.TokenID]; t != nil {
			tokenSeen = t.setFns
			// Give back the hold, then charge: only a token that is
			// limited now pays from its remaining quota.
			if r.tokenHeld {
				t.remain += r.Amount
				t.held -= r.Amount
			}
			if !t.unlimited {
				t.remain -= quota
				fromRemain = true
			}
			t.used += quota
		}
		l.dropDeletedLocked(r.TokenID)
	}
	if channelID != 0 {
		if _, ok := l.channels[channelID]; !ok {
			if c := s.RoutingChannel(channelID); c != nil {
				l.channels[channelID] = c.UsedQuota
			}
		}
		l.channels[channelID] += quota
	}
	l.mu.Unlock()
	if log != nil && log.CreatedAt == 0 {
		log.CreatedAt = s.nowUnix()
	}
	set := s.Settings()
	c := &charge{userID: r.UserID, tokenID: r.TokenID, channelID: channelID, quota: quota, fromRemain: fromRemain,
		userSeen: userSeen, tokenSeen: tokenSeen, log: log,
		writeLog: log != nil && set.Bool("LogConsumeEnabled"), dashboard: log != nil && set.Bool("DataExportEnabled")}
	if l.interval == 0 {
		c.done = make(chan error, 1)
	}
	if err := l.enqueue(c); err != nil {
		// The ledger is closed: the charge will not be written, so it
		// leaves memory too.
		l.revert([]*charge{c})
		return err
	}
	if c.done == nil {
		return nil
	}
	return <-c.done
}

func (l *ledger) enqueue(c *charge) (err error) {
	defer func() {
		if recover() != nil {
			err = Errorf(EUNAVAILABLE, "服务正在关闭")
		}
	}()
	if l.closed.Load() {
		return Errorf(EUNAVAILABLE, "服务正在关闭")
	}
	l.queue <- c
	return nil
}

// maxBatch bounds one transaction of charges.
const maxBatch = 2048

// writer commits queued charges: it takes whatever is waiting (up to
// maxBatch) and writes it in one transaction, so under load one fsync
// covers many calls.
func (l *ledger) writer() {
	defer l.wg.Done()
	batch := make([]*charge, 0, maxBatch)
	var lastCommit time.Duration
	lastBatch := 0
	var tick <-chan time.Time
	if l.interval > 0 {
		t := time.NewTicker(l.interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		c, ok := <-l.queue
		if !ok {
			return
		}
		batch = append(batch[:0], c)
		if tick != nil {
			// Interval mode: gather until the tick.
		gather:
			for {
				select {
				case c, ok := <-l.queue:
					if !ok {
						break gather
					}
					batch = append(batch, c)
				case <-tick:
					break gather
				}
			}
		} else {
		drain:
			for len(batch) < maxBatch {
				select {
				case c, ok := <-l.queue:
					if !ok {
						break drain
					}
					batch = append(batch, c)
				default:
					break drain
				}
			}
			// Under load, the callers released by the last commit come back
			// within a fraction of a commit's time. Waiting briefly for them
			// turns alternating full and tiny batches into full ones; with a
			// single caller (lastBatch 1) nothing waits.
			if lastBatch > 4 && len(batch) < lastBatch/2 {
				linger := lastCommit / 2
				if linger > 2*time.Millisecond {
					linger = 2 * time.Millisecond
				}
				timer := time.NewTimer(linger)
			gather2:
				for len(batch) < lastBatch && len(batch) < maxBatch {
					select {
					case c, ok := <-l.queue:
						if !ok {
							break gather2
						}
						batch = append(batch, c)
					case <-timer.C:
						break gather2
					}
				}
				timer.Stop()
			}
		}
		t0 := time.Now()
		l.commit(batch)
		lastCommit = time.Since(t0)
		lastBatch = len(batch)
	}
}

func (l *ledger) commit(batch []*charge) {
	s := l.s
	now := s.nowUnix()
	err := l.write(batch, now)
	if err != nil && len(batch) > 1 {
		// One record that cannot be written (or a passing failure, or a
		// file with room for a smaller transaction) must not take the other
		// calls' charges with it: each is tried alone. Once the file itself
		// fails one of them too, the rest fail with it: each failed commit
		// walks the whole file (see fileError) while every write waits, and
		// trying each charge of a large batch would hold them up for minutes.
		for i, c := range batch {
			now := s.nowUnix()
			err := l.write([]*charge{c}, now)
			l.commitDone([]*charge{c}, now, err)
			if fe := (*fileError)(nil); errors.As(err, &fe) {
				l.commitDone(batch[i+1:], now, err)
				return
			}
		}
		return
	}
	l.commitDone(batch, now, err)
}

// write commits batch in one transaction: its logs, dashboard rows and
// balance deltas.
func (l *ledger) write(batch []*charge, now int64) error {
	return l.s.update(func(tx *bolt.Tx) error {
		users := map[uint64]*userDelta{}
		tokens := map[uint64]*tokenDelta{}
		channels := map[uint64]int64{}
		rows := map[string]*QuotaDatum{}
		for _, c := range batch {
			u := users[c.userID]
			if u == nil {
				u = &userDelta{}
				users[c.userID] = u
			}
			u.quota += c.quota
			u.count++
			if c.tokenID != 0 {
				t := tokens[c.tokenID]
				if t == nil {
					t = &tokenDelta{}
					tokens[c.tokenID] = t
				}
				if c.fromRemain {
					t.remain += c.quota
				}
				t.used += c.quota
			}
			if c.channelID != 0 {
				channels[c.channelID] += c.quota
			}
			if c.writeLog {
				if err := appendLog(tx, c.log); err != nil {
					return err
				}
			}
			if c.dashboard {
				k := string(quotaDataKey(c.log.CreatedAt-c.log.CreatedAt%3600, c.userID, c.log.ModelName))
				d := rows[k]
				if d == nil {
					d = &QuotaDatum{UserID: c.userID, Username: c.log.Username, ModelName: c.log.ModelName, CreatedAt: c.log.CreatedAt - c.log.CreatedAt%3600}
					rows[k] = d
				}
				d.Count++
				d.Quota += c.quota
				d.TokenUsed += c.log.PromptTokens + c.log.CompletionTokens
			}
		}
		if err := addQuotaData(tx, rows); err != nil {
			return err
		}
		// Balance fields only: cached users keep serving the live balances.
		for id, d := range users {
			if err := chargeUser(tx, id, d); err != nil {
				return err
			}
		}
		for id, d := range tokens {
			if err := chargeToken(tx, id, d, now); err != nil {
				return err
			}
		}
		for id, used := range channels {
			if err := chargeChannel(tx, id, used); err != nil {
				return err
			}
		}
		return nil
	})
}

// commitDone finishes a commit of batch whose transaction ended with err.
func (l *ledger) commitDone(batch []*charge, now int64, err error) {
	s := l.s
	if err != nil {
		// Nothing was written: take the charges back out of memory so live
		// balances keep matching the file.
		l.revert(batch)
		for _, c := range batch {
			// A caller in interval mode was already answered: this is the
			// only trace of its lost charge.
			slog.Error("charge not written", "user", c.userID, "token", c.tokenID, "channel", c.channelID, "quota", c.quota, "err", err)
		}
		err = Internal(err)
	} else {
		logs := 0
		for _, c := range batch {
			if c.tokenID != 0 {
				s.auth.touched(c.tokenID, now)
			}
			if c.writeLog {
				logs++
			}
		}
		s.noteUnindexed(logs)
	}
	for _, c := range batch {
		if c.done != nil {
			c.done <- err
		}
	}
	if err == nil && l.s.hooks.Charged != nil {
		l.s.hooks.Charged(l.snapshot(batch))
	}
}

// revert takes settled charges that will not be written back out of the
// live balances: what is left is as if the calls had been refunded (their
// reservations were already given back by Settle). A balance set after a
// charge settled took it as made (the set is the balance as shown, the
// charge taken off): the set value stays, so the file, which the set moved
// expecting the charge, gives up the charge's quota instead of memory
// getting it back. It holds the write order (updateMu), so no set is
// between its computation and its arrival in memory meanwhile.
func (l *ledger) revert(batch []*charge) {
	s := l.s
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	users, tokens := map[uint64]int64{}, map[uint64]int64{}
	l.mu.Lock()
	for _, c := range batch {
		l.revertLocked(c, users, tokens)
	}
	l.mu.Unlock()
	if len(users)+len(tokens) == 0 {
		return
	}
	err := s.updateLocked(func(tx *bolt.Tx) error {
		for id, q := range users {
			if err := debit(tx, bucketUsers, id, keyQuota, q); err != nil {
				return err
			}
		}
		for id, q := range tokens {
			if err := debit(tx, bucketTokens, id, keyRemainQuota, q); err != nil {
				return err
			}
		}
		return nil
	}, nil)
	if err != nil {
		// The file keeps the charge's quota: memory gets it back too, so
		// both agree.
		slog.Error("a set balance gets back a charge that was not written", "users", users, "tokens", tokens, "err", err)
		l.mu.Lock()
		for id, q := range users {
			if u := l.users[id]; u != nil {
				u.quota += q
			}
		}
		for id, q := range tokens {
			if t := l.tokens[id]; t != nil {
				t.remain += q
			}
		}
		l.mu.Unlock()
	}
}

// debit takes q from the integer member key of record id in bucket.
func debit(tx *bolt.Tx, bucket []byte, id uint64, key []byte, q int64) error {
	b := tx.Bucket(bucket)
	raw := b.Get(itob(id))
	if raw == nil {
		return nil // deleted meanwhile: nothing left to give up
	}
	isUser := bytes.Equal(bucket, bucketUsers)
	// A token left without quota is marked exhausted, as a commit of the
	// charge would have (chargeToken).
	if data, ok := patchInts(raw, []intEdit{{key: key, add: -q}}); ok && (isUser || !mayExhaust(data)) {
		return b.Put(itob(id), data)
	}
	if isUser {
		u, err := getUser(tx, id)
		if err != nil {
			return err
		}
		u.Quota -= q
		return putJSON(b, itob(id), u)
	}
	t, err := getTokenAny(tx, id)
	if err != nil {
		return err
	}
	t.RemainQuota -= q
	if !t.UnlimitedQuota && t.RemainQuota <= 0 && t.Status == TokenStatusEnabled {
		t.Status = TokenStatusExhausted
		return putTokenRecord(tx, t)
	}
	return putJSON(b, itob(id), t)
}

// revertLocked is revert for one charge; the quota a set took as charged is
// added to users and tokens (by id) for the file to give up. l.mu is held.
func (l *ledger) revertLocked(c *charge, users, tokens map[uint64]int64) {
	if u := l.users[c.userID]; u != nil {
		if u.setDone > c.userSeen {
			users[c.userID] += c.quota
		} else {
			u.quota += c.quota
		}
		u.used -= c.quota
		u.count--
	}
	if t := l.tokens[c.tokenID]; t != nil {
		if c.fromRemain {
			if t.setDone > c.tokenSeen {
				tokens[c.tokenID] += c.quota
			} else {
				t.remain += c.quota
			}
		}
		t.used -= c.quota
	}
	if c.channelID != 0 {
		l.channels[c.channelID] -= c.quota
	}
}

// ChargeBatch is what the Charged hook receives after a commit.
type ChargeBatch struct {
	Logs     []*Log
	Balances []Balance
	Tokens   []TokenBalance
	// Unlogged is set when a charge of the batch added to the dashboard's
	// rows without writing a log (consume logs off): no log tail tells of it.
	Unlogged bool
}

// TokenBalance is a token's live quota as published after a charge.
type TokenBalance struct {
	TokenID, UserID        uint64
	RemainQuota, UsedQuota int64
	Unlimited              bool
}

func (l *ledger) snapshot(batch []*charge) ChargeBatch {
	var out ChargeBatch
	seen, seenToken := map[uint64]bool{}, map[uint64]bool{}
	l.mu.Lock()
	l.readSeq++
	seq := l.readSeq
	for _, c := range batch {
		if c.writeLog {
			out.Logs = append(out.Logs, c.log)
		} else if c.dashboard {
			out.Unlogged = true
		}
		if !seen[c.userID] {
			seen[c.userID] = true
			if b := l.users[c.userID]; b != nil {
				out.Balances = append(out.Balances, Balance{UserID: c.userID, Quota: b.shown(), UsedQuota: b.used, RequestCount: b.count, Seq: seq})
			}
		}
		if c.tokenID != 0 && !seenToken[c.tokenID] {
			seenToken[c.tokenID] = true
			if t := l.tokens[c.tokenID]; t != nil {
				out.Tokens = append(out.Tokens, TokenBalance{TokenID: c.tokenID, UserID: c.userID, RemainQuota: t.shown(), UsedQuota: t.used, Unlimited: t.unlimited})
			}
		}
	}
	l.mu.Unlock()
	return out
}

// getTokenAny reads a token even if it was deleted after its call started.
func getTokenAny(tx *bolt.Tx, id uint64) (*Token, error) {
	var t Token
	ok, err := getJSON(tx.Bucket(bucketTokens), itob(id), &t)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, Errorf(ENOTFOUND, "令牌不存在")
	}
	return &t, nil
}

// LiveBalance returns the user's live balance; its Quota is what a new call
// may spend (open reservations taken off), unlike the balance the user
// records show.
func (s *Store) LiveBalance(userID uint64) (Balance, error) {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	b, err := l.loadUser(userID)
	if err != nil {
		return Balance{}, err
	}
	return Balance{UserID: userID, Quota: b.quota, UsedQuota: b.used, RequestCount: b.count}, nil
}

// SetSyncInterval switches the ledger to commit every d instead of making
// each caller wait for its own commit; call before serving. A crash can then
// lose up to d of charges whose responses were already sent.
func (s *Store) SetSyncInterval(d time.Duration) {
	// Restart the writer with the new mode.
	s.ledger.close()
	s.ledger.closed.Store(false)
	s.ledger.interval = d
	s.ledger.queue = make(chan *charge, 4096)
	s.ledger.wg.Add(1)
	go s.ledger.writer()
}

// userDelta, tokenDelta: what one commit adds to a record's balance fields.
type userDelta struct{ quota, count int64 }
type tokenDelta struct{ remain, used int64 }

var (
	keyQuota        = []byte("quota")
	keyUsedQuota    = []byte("used_quota")
	keyRequestCount = []byte("request_count")
	keyRemainQuota  = []byte("remain_quota")
	keyAccessedTime = []byte("accessed_time")
)

// chargeUser moves d.quota from the user's quota to its used quota and
// counts the requests.
func chargeUser(tx *bolt.Tx, id uint64, d *userDelta) error {
	b := tx.Bucket(bucketUsers)
	key := itob(id)
	raw := b.Get(key)
	if raw == nil {
		return Errorf(ENOTFOUND, "用户不存在")
	}
	data, ok := patchInts(raw, []intEdit{{key: keyQuota, add: -d.quota}, {key: keyUsedQuota, add: d.quota}, {key: keyRequestCount, add: d.count}})
	if ok {
		return b.Put(key, data)
	}
	u, err := getUser(tx, id)
	if err != nil {
		return err
	}
	u.Quota -= d.quota
	u.UsedQuota += d.quota
	u.RequestCount += d.count
	return putJSON(b, key, u)
}

// chargeToken charges a token and marks it exhausted when a limited token's
// remaining quota ran out.
func chargeToken(tx *bolt.Tx, id uint64, d *tokenDelta, now int64) error {
	b := tx.Bucket(bucketTokens)
	key := itob(id)
	raw := b.Get(key)
	if raw == nil {
		return Errorf(ENOTFOUND, "令牌不存在")
	}
	data, ok := patchInts(raw, []intEdit{{key: keyRemainQuota, add: -d.remain}, {key: keyUsedQuota, add: d.used}, {key: keyAccessedTime, put: true, set: now}})
	if ok && !mayExhaust(data) {
		return b.Put(key, data)
	}
	t, err := getTokenAny(tx, id)
	if err != nil {
		return err
	}
	t.RemainQuota -= d.remain
	t.UsedQuota += d.used
	t.AccessedTime = now
	if !t.UnlimitedQuota && t.RemainQuota <= 0 && t.Status == TokenStatusEnabled {
		t.Status = TokenStatusExhausted
		return putTokenRecord(tx, t)
	}
	return putJSON(b, key, t)
}

// mayExhaust reports whether a token record may have to change status: it
// is enabled, limited and without remaining quota, or it cannot be told.
func mayExhaust(raw []byte) bool {
	var unlimited, status, remain []byte
	jsonMembers(raw, func(k []byte, start, end int) {
		switch string(k) {
		case "unlimited_quota":
			unlimited = raw[start:end]
		case "status":
			status = raw[start:end]
		case "remain_quota":
			remain = raw[start:end]
		}
	})
	if string(unlimited) == "true" || (status != nil && string(status) != strconv.Itoa(TokenStatusEnabled)) {
		return false
	}
	n, err := strconv.ParseInt(string(remain), 10, 64)
	return err != nil || n <= 0
}

// chargeChannel adds used to a channel's used quota; a channel deleted since
// the call was routed is skipped.
func chargeChannel(tx *bolt.Tx, id uint64, used int64) error {
	b := tx.Bucket(bucketChannels)
	key := itob(id)
	raw := b.Get(key)
	if raw == nil {
		return nil
	}
	if data, ok := patchInts(raw, []intEdit{{key: keyUsedQuota, add: used}}); ok {
		return b.Put(key, data)
	}
	ch, err := getChannel(tx, id)
	if err != nil {
		return nil // an unreadable record is left as it is, as a deleted one
	}
	ch.UsedQuota += used
	return putJSON(b, key, ch)
}
