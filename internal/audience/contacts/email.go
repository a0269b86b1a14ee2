package contacts

import (
	"strings"

	"github.com/outflowhq/outflow/internal/audience/suppression"
)

// MaxEmailLen is the longest address stored (RFC 5321's path limit).
const MaxEmailLen = 254

// NormalizeEmail reads a contact address the way suppressions do: `Ada <ADA@Example.com>` becomes
// `ada@example.com`. ok is false for anything that is not one address (a bare domain included).
func NormalizeEmail(raw string) (string, bool) {
	kind, v, ok := suppression.Normalize(raw)
	if !ok || kind != suppression.KindEmail || len(v) > MaxEmailLen {
		return "", false
	}
	return v, true
}

// Domain returns the domain part of a normalized address.
func Domain(email string) string {
	_, d, _ := strings.Cut(email, "@")
	return d
}
