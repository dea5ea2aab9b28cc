// Command gwctl prepares a gateway for a benchmark and checks its books
// afterwards. It speaks the gateway's console API only.
//
//	gwctl setup   --url U --upstream http://127.0.0.1:9100   prints a token key
//	gwctl account --url U                                    prints the books as JSON
//	gwctl verify  --url U --before before.json --load load.json
//
// verify fails (exit 1) unless, between the two snapshots, the consume log
// rows, the user's request count and the fake upstream's calls all equal
// the successful requests the load tool reported, and the user's used quota
// grew by exactly the sum of the new log rows' quota.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"strconv"
	"strings"
)

type client struct {
	url  string
	http *http.Client
	uid  int64
}

type envelope struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (c *client) call(method, path string, body any, out any) error {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.url+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.uid != 0 {
		req.Header.Set("New-Api-User", strconv.FormatInt(c.uid, 10))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env envelope
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return fmt.Errorf("%s %s: %s: %w", method, path, resp.Status, err)
	}
	if !env.Success {
		return fmt.Errorf("%s %s: %s", method, path, env.Message)
	}
	if out != nil {
		return json.Unmarshal(env.Data, out)
	}
	return nil
}

func login(url, user, pass string) (*client, error) {
	jar, _ := cookiejar.New(nil)
	c := &client{url: url, http: &http.Client{Jar: jar}}
	var u struct {
		ID int64 `json:"id"`
	}
	if err := c.call("POST", "/api/user/login", map[string]string{"username": user, "password": pass}, &u); err != nil {
		return nil, err
	}
	c.uid = u.ID
	return c, nil
}

// books is what verify compares.
type books struct {
	Logs         int64 `json:"logs"`
	LogQuota     int64 `json:"log_quota"`
	UsedQuota    int64 `json:"used_quota"`
	RequestCount int64 `json:"request_count"`
	Upstream     int64 `json:"upstream"`
}

func account(c *client, statsURL string) (books, error) {
	var b books
	var self struct {
		UsedQuota    int64 `json:"used_quota"`
		RequestCount int64 `json:"request_count"`
	}
	if err := c.call("GET", "/api/user/self", nil, &self); err != nil {
		return b, err
	}
	b.UsedQuota, b.RequestCount = self.UsedQuota, self.RequestCount
	for p := 1; ; p++ {
		var page struct {
			Items []struct {
				Quota int64 `json:"quota"`
			} `json:"items"`
			Total int64 `json:"total"`
		}
		if err := c.call("GET", fmt.Sprintf("/api/log/?type=2&p=%d&page_size=1000", p), nil, &page); err != nil {
			return b, err
		}
		for _, it := range page.Items {
			b.LogQuota += it.Quota
		}
		b.Logs = page.Total
		if len(page.Items) < 1000 {
			break
		}
	}
	if statsURL != "" {
		resp, err := http.Get(statsURL)
		if err != nil {
			return b, err
		}
		defer resp.Body.Close()
		var st struct {
			Chat int64 `json:"chat"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			return b, err
		}
		b.Upstream = st.Chat
	}
	return b, nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gwctl setup|account|verify [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	url := fs.String("url", "http://127.0.0.1:3000", "gateway base URL")
	user := fs.String("user", "root", "admin username")
	pass := fs.String("password", "123456", "admin password")
	upstream := fs.String("upstream", "http://127.0.0.1:9100", "fake upstream base URL (setup)")
	model := fs.String("model", "gpt-4o-mini", "model served by the channel (setup)")
	stats := fs.String("stats-url", "", "fake upstream /__stats (account, verify)")
	before := fs.String("before", "", "books before the load (verify)")
	loadFiles := fs.String("load", "", "comma-separated load --json outputs (verify)")
	fs.Parse(os.Args[2:])
	c, err := login(*url, *user, *pass)
	if err != nil {
		fail(err)
	}
	switch os.Args[1] {
	case "setup":
		ch := map[string]any{"name": "bench", "type": 1, "key": "bench-key", "base_url": *upstream, "models": *model, "group": "default"}
		if err := c.call("POST", "/api/channel/", ch, nil); err != nil {
			fail(err)
		}
		var tok struct {
			Key string `json:"key"`
		}
		if err := c.call("POST", "/api/token/", map[string]any{"name": "bench", "unlimited_quota": true, "expired_time": -1}, &tok); err != nil {
			fail(err)
		}
		fmt.Println("sk-" + tok.Key)
	case "account":
		b, err := account(c, *stats)
		if err != nil {
			fail(err)
		}
		json.NewEncoder(os.Stdout).Encode(b)
	case "verify":
		var b0 books
		data, err := os.ReadFile(*before)
		if err != nil {
			fail(err)
		}
		if err := json.Unmarshal(data, &b0); err != nil {
			fail(err)
		}
		b1, err := account(c, *stats)
		if err != nil {
			fail(err)
		}
		var sent, ok int64
		for _, f := range strings.Split(*loadFiles, ",") {
			var load struct {
				Runs []struct {
					Sent int64 `json:"sent"`
					OK   int64 `json:"ok"`
				} `json:"runs"`
			}
			data, err := os.ReadFile(f)
			if err != nil {
				fail(err)
			}
			if err := json.Unmarshal(data, &load); err != nil {
				fail(err)
			}
			for _, r := range load.Runs {
				sent += r.Sent
				ok += r.OK
			}
		}
		d := books{Logs: b1.Logs - b0.Logs, LogQuota: b1.LogQuota - b0.LogQuota, UsedQuota: b1.UsedQuota - b0.UsedQuota,
			RequestCount: b1.RequestCount - b0.RequestCount, Upstream: b1.Upstream - b0.Upstream}
		fmt.Printf("requests sent %d, ok %d; upstream calls %d; log rows %d; charges %d; used quota %d = log quota %d\n",
			sent, ok, d.Upstream, d.Logs, d.RequestCount, d.UsedQuota, d.LogQuota)
		if sent != ok || ok != d.Logs || ok != d.RequestCount || (*stats != "" && ok != d.Upstream) || d.UsedQuota != d.LogQuota {
			fmt.Println("BOOKS DO NOT MATCH")
			os.Exit(1)
		}
		fmt.Println("books match: zero lost, zero duplicated")
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gwctl:", err)
	os.Exit(1)
}
