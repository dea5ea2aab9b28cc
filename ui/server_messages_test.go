package ui

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The server's messages stay Chinese on the wire (clients match on them);
// the English console shows them through catalogueFile, which this test
// keeps complete: every Chinese string literal of the server's Go code needs
// an English entry there, keyed by the message it builds (a format string as
// written, a concatenation with %s for each operand that is not a literal),
// unless it is only compared against (==, !=, comparedBy) or notMessages
// lists it with the reason.

// catalogueFile is the console's catalogue of English server texts.
const catalogueFile = "src/i18n/server.en.json"

// messageRoots are the server's packages (relative to ui/), read recursively;
// the root package (main) is read alone, without its sub-directories.
var messageRoots = []string{"../api", "../store", "../relay", "../policy", "../egress", "../ws", "../mail"}

// notMessages are the Chinese literals the scan finds that are never shown
// as a message: file (relative to the repository root) and the literal's
// pattern ("*" for every literal of the file), each with the reason.
var notMessages = []struct{ file, pattern, why string }{
	{"api/channel_mail.go", "*", "mail to the root user (subject, body and the words in it), never an answer"},
	{"api/channels.go", "_复制", "the suffix of a copied channel's name (data), measured here"},
	{"api/channels.go", "%s_复制", "the name a copied channel gets (data)"},
	{"api/quota_reminder.go", "*", "the quota reminder mail (subject and body), never an answer"},
	{"api/verification.go", "<p>您好，你正在进行%s邮箱验证。</p><p>您的验证码为：<strong>%s</strong></p><p>验证码 %d 分钟内有效，如果不是本人操作，请忽略。</p>", "body of the verification mail"},
	{"api/verification.go", "%s邮箱验证邮件", "subject of the verification mail"},
	{"api/verification.go", `<p>您好，你正在进行%s密码重置。</p><p>点击 <a href="%s">此处</a> 进行密码重置。</p><p>如果链接无法点击，请尝试复制以下链接到浏览器中打开：<br>%s</p><p>重置链接 %d 分钟内有效，如果不是本人操作，请忽略。</p>`, "body of the password-reset mail"},
	{"api/verification.go", "%s密码重置", "subject of the password-reset mail"},
	{"relay/health.go", "系统", "the user name of a test log written without a user: data shown as a name"},
	{"store/channels.go", "模型映射", "a field label compared against a few lines below; the messages are their own literals"},
	{"store/channels.go", "状态码复写", "a field label compared against a few lines below; the messages are their own literals"},
	{"store/options.go", `{"default":"默认分组","vip":"vip分组"}`, "default data: the group labels of UserUsableGroups, an option the administrator edits"},
	{"store/options.go", "用户分组", "a group label in the usable-groups list (data), not a message"},
	{"store/pricing_defaults.go", "*", "default data: the names of the default chat links, an option the administrator edits"},
	{"store/users.go", "初始令牌", "default data: the name of a new user's first token"},
}

// comparedBy are functions whose string arguments are compared, never sent.
var comparedBy = map[string]bool{
	"strings.Contains": true, "strings.HasPrefix": true, "strings.HasSuffix": true,
	"strings.CutPrefix": true, "strings.CutSuffix": true, "strings.Index": true,
}

// printfVerb matches a Go verb as the catalogue uses it: %s, %d, %.2f, %q,
// %v, or with an explicit argument index (%[2]s) in the English texts.
var printfVerb = regexp.MustCompile(`%(?:\[(\d+)\])?(?:\.\d+)?[a-zA-Z]`)

// found is one Chinese literal of the server as the scan read it.
type found struct {
	pos      string // file:line
	file     string // relative to the repository root
	pattern  string // the message it builds, other operands as %s
	fragment bool   // part of a text built over several statements (+=)
}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// serverGoFiles lists the non-test Go files of the server's packages.
func serverGoFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, root := range messageRoots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".go") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	out := files[:0]
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// flatten renders a string concatenation with its literals as they are and
// every other operand as %s.
func flatten(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return flatten(e.X)
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return flatten(e.X) + flatten(e.Y)
		}
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			if s, err := strconv.Unquote(e.Value); err == nil {
				return s
			}
		}
	}
	return "%s"
}

func calleeName(call *ast.CallExpr) string {
	if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
		if x, ok := sel.X.(*ast.Ident); ok {
			return x.Name + "." + sel.Sel.Name
		}
	}
	return ""
}

// scanFile returns the file's Chinese literals that can be messages: a
// literal inside a concatenation stands for the whole concatenation; a
// literal only compared against (==, !=, strings.Contains and the like) is
// left out.
func scanFile(t *testing.T, fset *token.FileSet, path string) []found {
	t.Helper()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	rel := filepath.ToSlash(strings.TrimPrefix(filepath.Clean(path), ".."+string(filepath.Separator)))
	parent := map[ast.Node]ast.Node{}
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if len(stack) > 0 {
			parent[n] = stack[len(stack)-1]
		}
		stack = append(stack, n)
		return true
	})
	// appendedTo holds, per function, the variables a text is appended to.
	appendedTo := map[ast.Node]map[string]bool{}
	funcOf := func(n ast.Node) ast.Node {
		for p := parent[n]; p != nil; p = parent[p] {
			if _, ok := p.(*ast.FuncDecl); ok {
				return p
			}
		}
		return nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && as.Tok == token.ADD_ASSIGN {
			if id, ok := as.Lhs[0].(*ast.Ident); ok {
				fn := funcOf(as)
				if appendedTo[fn] == nil {
					appendedTo[fn] = map[string]bool{}
				}
				appendedTo[fn][id.Name] = true
			}
		}
		return true
	})

	var out []found
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil || !hasHan(s) {
			return true
		}
		switch p := parent[lit].(type) {
		case *ast.BinaryExpr:
			if p.Op == token.EQL || p.Op == token.NEQ {
				return true
			}
		case *ast.CallExpr:
			if comparedBy[calleeName(p)] {
				return true
			}
		}
		var top ast.Expr = lit
		for {
			switch p := parent[top].(type) {
			case *ast.ParenExpr:
				top = p
				continue
			case *ast.BinaryExpr:
				if p.Op == token.ADD {
					top = p
					continue
				}
			}
			break
		}
		fr := false
		if as, ok := parent[top].(*ast.AssignStmt); ok && len(as.Lhs) == 1 {
			if id, ok := as.Lhs[0].(*ast.Ident); ok {
				fr = as.Tok == token.ADD_ASSIGN || appendedTo[funcOf(as)][id.Name]
			}
		}
		pos := rel + ":" + strconv.Itoa(fset.Position(lit.Pos()).Line)
		out = append(out, found{pos: pos, file: rel, pattern: flatten(top), fragment: fr})
		return true
	})
	return out
}

// verbIndexes returns the argument each verb of text takes (1-based).
func verbIndexes(text string) []int {
	var out []int
	next := 1
	for _, m := range printfVerb.FindAllStringSubmatch(text, -1) {
		if m[1] != "" {
			n, _ := strconv.Atoi(m[1])
			out = append(out, n)
			next = n + 1
			continue
		}
		out = append(out, next)
		next++
	}
	return out
}

func TestServerMessagesHaveEnglish(t *testing.T) {
	data, err := os.ReadFile(catalogueFile)
	if err != nil {
		t.Fatal(err)
	}
	var catalogue map[string]string
	if err := json.Unmarshal(data, &catalogue); err != nil {
		t.Fatalf("%s: %v", catalogueFile, err)
	}

	fset := token.NewFileSet()
	var all []found
	for _, path := range serverGoFiles(t) {
		all = append(all, scanFile(t, fset, path)...)
	}
	if len(all) < 300 {
		t.Fatalf("the scan found only %d Chinese literals: it no longer reads the server's code", len(all))
	}

	skipUsed := make([]bool, len(notMessages))
	used := map[string]bool{}
	var fragments []found
	var missing []string
	for _, f := range all {
		skipped := false
		for i, s := range notMessages {
			if s.file == f.file && (s.pattern == "*" || s.pattern == f.pattern) {
				skipUsed[i], skipped = true, true
			}
		}
		if skipped {
			continue
		}
		if f.fragment {
			fragments = append(fragments, f)
			continue
		}
		used[f.pattern] = true
		if strings.TrimSpace(catalogue[f.pattern]) == "" {
			missing = append(missing, f.pos+": "+strconv.Quote(f.pattern))
		}
	}
	for _, m := range missing {
		t.Errorf("no English text in %s for %s", catalogueFile, m)
	}
	for i, used := range skipUsed {
		if !used {
			t.Errorf("notMessages lists %s %q, which the scan no longer finds: remove it", notMessages[i].file, notMessages[i].pattern)
		}
	}

	// A text built over several statements (a consumption log's content)
	// has one entry per form it can take; each piece must be in one.
	for _, f := range fragments {
		in := false
		for k := range catalogue {
			if strings.Contains(k, f.pattern) {
				in, used[k] = true, true
			}
		}
		if !in {
			t.Errorf("%s: no entry in %s contains the piece %q", f.pos, catalogueFile, f.pattern)
		}
	}

	for k, en := range catalogue {
		if !used[k] {
			t.Errorf("%s has %q, which the server no longer writes: remove it", catalogueFile, k)
		}
		// The English text places every value the message carries, once or more, and no other.
		n := len(verbIndexes(k))
		got := map[int]bool{}
		for _, i := range verbIndexes(en) {
			if i < 1 || i > n {
				t.Errorf("%s: the English text of %q uses a value it does not have: %q", catalogueFile, k, en)
				continue
			}
			got[i] = true
		}
		if len(got) != n {
			t.Errorf("%s: the English text of %q does not place all its %d values: %q", catalogueFile, k, n, en)
		}
		if hasHan(en) {
			t.Errorf("%s: the English text of %q is not English: %q", catalogueFile, k, en)
		}
	}
}
