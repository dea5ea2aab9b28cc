package api

import (
	"context"
	"fmt"
	"html"
	"log/slog"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"gateway/store"
)

// ChannelMailer mails the root user about channel health: when a channel is
// disabled automatically (S §5.9) and when a test of all channels started
// from the console finishes (S §5.10). Mails are sent in the background,
// never on the relay's or a request's path, and a failure is only logged.
// Nothing is sent while SMTP is not configured or root has no e-mail
// address, nor by a nil mailer.
type ChannelMailer struct {
	store *store.Store
	send  MailFunc
	// queue holds the mails waiting for the mail server.
	queue *mailQueue[channelMail]

	// A burst of disables (a dead provider, a test of all channels) mails
	// root once at the first, then once per digestEvery with the ones
	// disabled since, not once per channel.
	digestEvery time.Duration
	mu          sync.Mutex
	holding     bool             // a digest window is open
	held        []disabledNotice // disabled since the window opened
	heldMore    int              // disabled past maxDigestLines
	timer       *time.Timer      // ends the window
	window      uint64           // counts windows: a timer of an earlier one does nothing
}

// disabledNotice is one automatically disabled channel as the mail tells it.
type disabledNotice struct {
	id           uint64
	name, reason string
	at           time.Time
}

// maxDigestLines bounds the channels a digest lists; the rest are counted.
const maxDigestLines = 200

type channelMail struct{ subject, body string }

// maxChannelMailQueue bounds the mails waiting for a sender; beyond it a
// mail is dropped (and logged): a channel flapping while the mail server
// stalls would otherwise pile them up for as long as the stall lasts.
const maxChannelMailQueue = 256

// maxChannelMailSends bounds the channel mails being sent at once: a dead
// provider can disable many channels in a burst.
const maxChannelMailSends = 2

// NewChannelMailer returns a mailer that sends through send.
func NewChannelMailer(st *store.Store, send MailFunc) *ChannelMailer {
	m := &ChannelMailer{store: st, send: send, digestEvery: time.Minute}
	m.queue = &mailQueue[channelMail]{maxWaiting: maxChannelMailQueue, maxSenders: maxChannelMailSends,
		send: func(c channelMail) { m.deliver(c.subject, c.body) }}
	return m
}

// ChannelDisabled mails root that c was disabled automatically, with the
// reason and time its other_info records. It never blocks.
func (m *ChannelMailer) ChannelDisabled(c *store.Channel) {
	var info store.ChannelStatusInfo
	_ = json.Unmarshal([]byte(c.OtherInfo), &info)
	at := time.Now()
	if info.StatusTime > 0 {
		at = time.Unix(info.StatusTime, 0)
	}
	reason := info.StatusReason
	if reason == "" {
		reason = "未知"
	}
	n := disabledNotice{id: c.ID, name: c.Name, reason: reason, at: at}
	if m == nil || m.store.Settings().Get("SMTPServer") == "" {
		return
	}
	m.mu.Lock()
	if m.holding {
		if len(m.held) < maxDigestLines {
			m.held = append(m.held, n)
		} else {
			m.heldMore++
		}
		m.mu.Unlock()
		return
	}
	m.holding = true
	m.armLocked()
	m.mu.Unlock()
	// A line break in the name would be refused as header injection.
	name := strings.NewReplacer("\r", " ", "\n", " ").Replace(c.Name)
	subject := fmt.Sprintf("渠道「%s」（#%d）已被自动禁用", name, c.ID)
	body := fmt.Sprintf("<p>渠道「%s」（#%d）已被自动禁用。</p><p>原因：%s</p><p>时间：%s</p>",
		html.EscapeString(c.Name), c.ID, html.EscapeString(reason), at.Format(mailTimeLayout))
	m.mailRoot(subject, body)
}

// armLocked opens the next digest window. m.mu is held.
func (m *ChannelMailer) armLocked() {
	m.window++
	w := m.window
	m.timer = time.AfterFunc(m.digestEvery, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.window == w {
			m.sendDigestLocked()
		}
	})
}

// sendDigestLocked mails root the channels disabled since the window
// opened, and opens another window when there were any. m.mu is held (the
// mail is queued, never sent, under it).
func (m *ChannelMailer) sendDigestLocked() {
	held, more := m.held, m.heldMore
	m.held, m.heldMore = nil, 0
	if len(held) == 0 {
		m.holding = false
		m.timer = nil
		m.window++
		return
	}
	m.armLocked()
	var b strings.Builder
	fmt.Fprintf(&b, "<p>以下 %d 个渠道已被自动禁用：</p><ul>", len(held)+more)
	for _, n := range held {
		fmt.Fprintf(&b, "<li>渠道「%s」（#%d），原因：%s，时间：%s</li>",
			html.EscapeString(n.name), n.id, html.EscapeString(n.reason), n.at.Format(mailTimeLayout))
	}
	b.WriteString("</ul>")
	if more > 0 {
		fmt.Fprintf(&b, "<p>另有 %d 个渠道未列出，请在渠道页面查看。</p>", more)
	}
	m.mailRoot(fmt.Sprintf("%d 个渠道已被自动禁用", len(held)+more), b.String())
}

// mailTimeLayout writes a time in the server's zone with its offset: a reader
// in another zone than the server's can tell the instant.
const mailTimeLayout = "2006-01-02 15:04:05 (UTC-07:00)"

// TestSummary counts the outcome of one test of all channels.
type TestSummary struct {
	Tested, Failed, Disabled, Enabled int
}

// TestAllFinished mails root the summary of a test of all channels started
// from the console. It never blocks.
func (m *ChannelMailer) TestAllFinished(sum TestSummary) {
	body := fmt.Sprintf("<p>所有渠道测试已完成。</p><p>共测试 %d 个渠道，失败 %d 个，自动禁用 %d 个，自动启用 %d 个。</p><p>完成时间：%s</p>",
		sum.Tested, sum.Failed, sum.Disabled, sum.Enabled, time.Now().Format(mailTimeLayout))
	m.mailRoot("渠道测试完成", body)
}

// Wait sends at once the digest of channels disabled since the last mail,
// and blocks until every mail being sent has finished (tests, shutdown).
func (m *ChannelMailer) Wait() {
	if m == nil {
		return
	}
	m.mu.Lock()
	if m.timer != nil {
		// A timer that fired but waits for the lock finds its window over.
		m.timer.Stop()
		m.sendDigestLocked()
	}
	m.mu.Unlock()
	m.queue.wait()
}

func (m *ChannelMailer) mailRoot(subject, body string) {
	if m == nil || m.store.Settings().Get("SMTPServer") == "" {
		return
	}
	if !m.queue.push(channelMail{subject, body}) {
		slog.Warn("channel mail to root dropped: too many waiting for the mail server", "subject", subject)
	}
}

func (m *ChannelMailer) deliver(subject, body string) {
	root := rootUser(m.store)
	if root == nil || root.Email == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.send(ctx, root.Email, m.store.Settings().Get("SystemName")+" "+subject, body); err != nil {
		slog.Warn("channel mail to root not sent", "subject", subject, "err", err)
	}
}

// rootUser returns the root account, nil when there is none. Root is the
// first account on a fresh data file, so id 1 is tried before a scan.
func rootUser(st *store.Store) *store.User {
	if u, err := st.User(1); err == nil && u.Role >= store.RoleRoot && !u.Deleted() {
		return u
	}
	users, err := st.Users(store.UserFilter{})
	if err != nil {
		slog.Error("find root user", "err", err)
		return nil
	}
	for _, u := range users {
		if u.Role >= store.RoleRoot && !u.Deleted() {
			return u
		}
	}
	return nil
}
