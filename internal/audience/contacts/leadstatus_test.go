package contacts_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/audience/contacts"
)

// TestContactViewLeadsDerivesStatusAsSearchDoes keeps the one lead-status rule in two places equal: the search
// builder's LeadStatusSQL and the static ContactViewLeads query (sqlc cannot take it from Go), so a contact's
// campaign_lead.status always says what lead_status filters on.
func TestContactViewLeadsDerivesStatusAsSearchDoes(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "queries", "contacts.sql"))
	require.NoError(t, err)
	_, query, ok := strings.Cut(string(src), "-- name: ContactViewLeads ")
	require.True(t, ok, "queries/contacts.sql must hold ContactViewLeads")
	query, _, _ = strings.Cut(query, "-- name: ")
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	require.Contains(t, flat(query), "("+flat(contacts.LeadStatusSQL)+")::text AS status")
}
