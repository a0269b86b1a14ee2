package verify

import (
	_ "embed"
	"strings"
)

// The lists are text files so they can be reviewed and extended without touching code.
var (
	//go:embed disposable_domains.txt
	disposableDomainsFile string
	//go:embed role_local_parts.txt
	roleLocalPartsFile string

	disposableDomains = readList(disposableDomainsFile)
	roleLocalParts    = readList(roleLocalPartsFile)
)

// readList reads one lowercase entry per line, skipping blank lines and "#" comments.
func readList(text string) map[string]bool {
	set := map[string]bool{}
	for line := range strings.Lines(text) {
		if line, _, _ = strings.Cut(line, "#"); strings.TrimSpace(line) != "" {
			set[strings.ToLower(strings.TrimSpace(line))] = true
		}
	}
	return set
}

// IsDisposable reports whether domain, or a domain it is under, is a disposable mailbox service
// (x.mailinator.com is as disposable as mailinator.com); imports count such addresses in their quality report.
func IsDisposable(domain string) bool {
	for d := domain; d != ""; {
		if disposableDomains[d] {
			return true
		}
		_, rest, ok := strings.Cut(d, ".")
		if !ok {
			return false
		}
		d = rest
	}
	return false
}

// IsRole reports whether a local part names a role account (a "+tag" suffix is ignored: sales+eu is sales);
// imports count role addresses in their quality report with it.
func IsRole(local string) bool {
	local, _, _ = strings.Cut(strings.ToLower(local), "+")
	return roleLocalParts[local]
}

// IsRoleAddress reports whether a normalized address names a role account (see IsRole).
func IsRoleAddress(email string) bool {
	local, _, _ := strings.Cut(email, "@")
	return IsRole(local)
}
