// Package policy decides which role may call which route. The Casbin model
// and the policy lines are embedded files, reviewed like code; anything not
// listed is denied.
package policy

import (
	_ "embed"
	"fmt"

	"github.com/casbin/casbin/v3"
	"github.com/casbin/casbin/v3/model"
	stringadapter "github.com/casbin/casbin/v3/persist/string-adapter"
)

//go:embed model.conf
var modelText string

//go:embed policy.csv
var policyText string

// Role subjects, from least to most privileged.
const (
	Guest = "guest"
	User  = "user"
	Admin = "admin"
	Root  = "root"
)

// Roles lists every subject, least privileged first.
var Roles = []string{Guest, User, Admin, Root}

// Policy answers access questions from the embedded model and policy.
type Policy struct {
	e *casbin.Enforcer
}

// New loads the embedded model and policy.
func New() (*Policy, error) {
	m, err := model.NewModelFromString(modelText)
	if err != nil {
		return nil, fmt.Errorf("policy model: %w", err)
	}
	e, err := casbin.NewEnforcer(m, stringadapter.NewAdapter(policyText))
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return &Policy{e: e}, nil
}

// Allowed reports whether role may call method on the route pattern path.
func (p *Policy) Allowed(role, path, method string) bool {
	ok, err := p.e.Enforce(role, path, method)
	return err == nil && ok
}

// Routes returns every (path, method) pair that has a policy line.
func (p *Policy) Routes() [][2]string {
	rules, _ := p.e.GetPolicy()
	out := make([][2]string, 0, len(rules))
	for _, r := range rules {
		out = append(out, [2]string{r[1], r[2]})
	}
	return out
}
