package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gateway/mail/smtptest"
	"gateway/store"
)

// The server's own relay (no relay in Config) mails root over real SMTP
// when a channel test disables a channel, and the console's test of all
// channels mails root a summary when it ends.
func TestChannelMail_SMTP(t *testing.T) {
	t.Parallel()
	const rootEmail = "root@example.com"
	ts, smtp, up := startRevokedKeyMail(t, rootEmail)
	ch := &store.Channel{Type: 1, Name: "revoked", Key: "sk-revoked", BaseURL: up.URL, Models: "gpt-4o-mini", Group: "default", AutoBan: 1}
	if err := ts.Store.CreateChannels([]*store.Channel{ch}); err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatUint(ch.ID, 10)

	ApiScenario{Name: "Test", URL: "/api/channel/test/" + id, As: "root", WantStatus: 200,
		WantContains: []string{`"success":false`, "Incorrect API key provided"}}.Test(t, ts)
	ts.API.ChannelMailer().Wait()
	m := smtp.Wait(t)
	if len(m.To) != 1 || m.To[0] != rootEmail || !strings.Contains(m.Subject, "#"+id) || !strings.Contains(m.Subject, "revoked") ||
		!strings.Contains(m.Body, "Incorrect API key provided") {
		t.Fatalf("disable mail to %v, subject %q: %s", m.To, m.Subject, m.Body)
	}

	ApiScenario{Name: "TestAll", URL: "/api/channel/test", As: "root", WantStatus: 200}.Test(t, ts)
	m = smtp.Wait(t)
	if len(m.To) != 1 || m.To[0] != rootEmail || !strings.Contains(m.Subject, "渠道测试完成") ||
		!strings.Contains(m.Body, "共测试 1 个渠道，失败 1 个，自动禁用 0 个，自动启用 0 个") {
		t.Fatalf("summary mail to %v, subject %q: %s", m.To, m.Subject, m.Body)
	}
	ts.API.ChannelMailer().Wait()
	if n := len(smtp.Messages()); n != 2 {
		t.Fatalf("%d mails sent, want 2", n)
	}
}

// The disable mail names the instant the channel was disabled whatever the server's time zone:
// an operator reading it in another zone than the server's (a UTC server, a console in China) must
// not take a server-local time for their own. Not parallel: it changes time.Local.
func TestChannelMail_TimeNamesItsZone(t *testing.T) {
	saved := time.Local
	t.Cleanup(func() { time.Local = saved })
	time.Local = time.FixedZone("CST", 8*3600)
	ts, smtp, up := startRevokedKeyMail(t, "root@example.com")
	ch := &store.Channel{Type: 1, Name: "revoked", Key: "sk-revoked", BaseURL: up.URL, Models: "gpt-4o-mini", Group: "default", AutoBan: 1}
	if err := ts.Store.CreateChannels([]*store.Channel{ch}); err != nil {
		t.Fatal(err)
	}
	ApiScenario{Name: "Test", URL: "/api/channel/test/" + strconv.FormatUint(ch.ID, 10), As: "root", WantStatus: 200,
		WantContains: []string{`"success":false`}}.Test(t, ts)
	ts.API.ChannelMailer().Wait()
	m := smtp.Wait(t)
	stored, err := ts.Store.Channel(ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	var info store.ChannelStatusInfo
	if err := json.Unmarshal([]byte(stored.OtherInfo), &info); err != nil || info.StatusTime == 0 {
		t.Fatalf("other_info %q: %v", stored.OtherInfo, err)
	}
	found := regexp.MustCompile(`时间：([^<]*)<`).FindStringSubmatch(m.Body)
	if found == nil {
		t.Fatalf("no time in the mail: %s", m.Body)
	}
	at, err := time.Parse("2006-01-02 15:04:05 (UTC-07:00)", found[1])
	if err != nil || at.Unix() != info.StatusTime {
		t.Fatalf("the mail says %q (%v, %v), the channel was disabled at %s", found[1], at, err, time.Unix(info.StatusTime, 0).UTC())
	}
}

// A burst of automatic disables (a test of all channels against a provider
// that revoked its keys) mails root at the first one, then one digest of the
// others, not a mail per channel.
func TestChannelMail_BurstOfDisablesIsOneDigest(t *testing.T) {
	t.Parallel()
	ts, smtp, up := startRevokedKeyMail(t, "root@example.com")
	const n = 20
	var chans []*store.Channel
	for i := range n {
		chans = append(chans, &store.Channel{Type: 1, Name: "revoked-" + strconv.Itoa(i), Key: "sk-revoked", BaseURL: up.URL, Models: "gpt-4o-mini", Group: "default", AutoBan: 1})
	}
	if err := ts.Store.CreateChannels(chans); err != nil {
		t.Fatal(err)
	}
	ApiScenario{Name: "TestAll", URL: "/api/channel/test", As: "root", WantStatus: 200}.Test(t, ts)
	for {
		if m := smtp.Wait(t); strings.Contains(m.Subject, "渠道测试完成") {
			if !strings.Contains(m.Body, "自动禁用 20 个") {
				t.Fatalf("summary: %s", m.Body)
			}
			break
		}
	}
	ts.API.ChannelMailer().Wait()
	var single, digest int
	for _, m := range smtp.Messages() {
		switch {
		case strings.Contains(m.Subject, "已被自动禁用") && strings.Contains(m.Subject, "#"):
			single++
		case strings.Contains(m.Subject, "19 个渠道已被自动禁用"):
			digest++
			if got := strings.Count(m.Body, "<li>"); got != n-1 || !strings.Contains(m.Body, "Incorrect API key provided") {
				t.Errorf("the digest lists %d channels, want %d: %s", got, n-1, m.Body)
			}
		}
	}
	if single != 1 || digest != 1 || len(smtp.Messages()) != 3 {
		t.Fatalf("%d mails (%d single, %d digests), want 3: the first disable, the summary and one digest", len(smtp.Messages()), single, digest)
	}
}

// startRevokedKeyMail starts a gateway that mails root at rootEmail over a
// test SMTP server and disables channels automatically, and an upstream
// that refuses every key as revoked.
func startRevokedKeyMail(t *testing.T, rootEmail string) (*TestServer, *smtptest.Server, *httptest.Server) {
	t.Helper()
	ts, smtp := MustStartMailServer(t)
	ts.MustSetOptions(t, "AutomaticDisableChannelEnabled", "true")
	if _, err := ts.Store.UpdateUser(ts.UserID(t, "root"), store.UserUpdate{Email: &rootEmail}); err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`))
	}))
	t.Cleanup(up.Close)
	return ts, smtp, up
}
