package oauth

import (
	"fmt"
	"strings"

	"github.com/outflowhq/outflow/internal/identity/auth"
)

// SelfRegisteredForbidden are the scopes a client that registered itself can never hold: sending campaigns and
// managing credentials need an app that an organization registered and answers for.
const SelfRegisteredForbidden = auth.SendCampaigns | auth.APIKeys

// ScopeNames lists p as OAuth scopes (the permission names lowercased), in catalog order.
func ScopeNames(p auth.Permission) []string { return p.Scopes() }

// ScopeString is p as a space-separated scope parameter.
func ScopeString(p auth.Permission) string { return strings.Join(p.Scopes(), " ") }

// ParseScopeNames reads OAuth scope names. OAuth scopes are case-sensitive and spelled in lower case, so
// READ_EMAILS is not a scope; an unknown name is an error naming it.
func ParseScopeNames(names []string) (auth.Permission, error) {
	var p auth.Permission
	for _, n := range names {
		if n != strings.ToLower(n) {
			return 0, fmt.Errorf("unknown scope %q", n)
		}
		bits, err := auth.ParseScopes([]string{n})
		if err != nil {
			return 0, err
		}
		p |= bits
	}
	return p, nil
}

// ParseScope reads a space-separated scope parameter.
func ParseScope(s string) (auth.Permission, error) { return ParseScopeNames(strings.Fields(s)) }

// ScopeInfo is one scope as the consent page shows it.
type ScopeInfo struct {
	Name        string
	Description string
}

// ScopeInfos describes each scope of p, in catalog order.
func ScopeInfos(p auth.Permission) []ScopeInfo {
	var out []ScopeInfo
	for _, e := range auth.Catalog {
		if p&e.Permission != 0 {
			out = append(out, ScopeInfo{Name: strings.ToLower(e.Name), Description: e.Description})
		}
	}
	return out
}
