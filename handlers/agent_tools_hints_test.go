package handlers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/identity/auth"
)

// The route table decides who may call a tool; the contract's hints say what it does. A tool a read-only
// credential may call (its route open to keys with a scope of the read-only preset) must change nothing,
// or the preset would grant a write.
func TestEveryToolARouteOpensToReadOnlyKeysIsHintedReadOnly(t *testing.T) {
	t.Parallel()
	catalog, err := toolCatalog()
	require.NoError(t, err)
	var readable int
	for _, c := range catalog {
		route := Routes[c.operation]
		if route.Access != auth.AccessAny || !auth.ReadOnly.Has(route.Scope) {
			continue
		}
		readable++
		require.True(t, c.def.Hints.ReadOnly, "%s: the route lets a read-only key call it (%v), yet its hints say it writes",
			c.def.Name, route.Scope.Names())
	}
	require.Greater(t, readable, 50, "the read-only preset opens the reads of every area")
}
