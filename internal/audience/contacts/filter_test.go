package contacts_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	var e *apierror.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, code, e.Code)
}

func TestParseSearchTurnsInputIntoAFilter(t *testing.T) {
	t.Parallel()
	campaign := uuid.New()
	after := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	least := 2
	f, err := contacts.ParseSearch(contacts.SearchInput{
		Query:        "  ada  ",
		CampaignIDs:  []string{" " + campaign.String(), campaign.String()},
		LeadStatus:   "replied",
		MinCampaigns: &least,
		CreatedAfter: &after,
		SortBy:       contacts.SortEmail,
		Reverse:      true,
	})
	require.NoError(t, err)
	require.Equal(t, "ada", f.Query)
	require.Equal(t, []uuid.UUID{campaign}, f.CampaignIDs, "ids are trimmed and deduplicated")
	require.Equal(t, "replied", f.LeadStatus)
	require.Equal(t, &least, f.MinCampaigns)
	require.Equal(t, &after, f.CreatedAfter)
	require.Nil(t, f.CreatedBefore)
	require.Equal(t, "contacts:email:asc", f.SortOrder())

	f, err = contacts.ParseSearch(contacts.SearchInput{SortBy: "shoe_size"})
	require.NoError(t, err)
	require.True(t, f.Empty())
	require.Equal(t, contacts.SortCreatedAt, f.Sort, "an unknown sort falls back to created_at")
}

func TestParseSearchRefusesInputNamingTheField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   contacts.SearchInput
		code string
	}{
		{"query too long", contacts.SearchInput{Query: strings.Repeat("a", contacts.MaxQueryLen+1)}, "invalid_query"},
		{"not a campaign id", contacts.SearchInput{CampaignIDs: []string{"nope"}}, "invalid_campaign_ids"},
		{"lead status without one campaign", contacts.SearchInput{LeadStatus: "replied"}, "lead_filter_requires_campaign"},
		{"unknown lead status", contacts.SearchInput{CampaignIDs: []string{uuid.NewString()}, LeadStatus: "asleep"}, "invalid_lead_status"},
		{"bad custom field name", contacts.SearchInput{Custom: []contacts.CustomFilter{{Name: "a;b", Value: "x", Type: "equal"}}}, "invalid_custom_field"},
	} {
		_, err := contacts.ParseSearch(tc.in)
		requireCode(t, err, tc.code)
	}
}

func TestParseSelectionTakesIDsOrAFilter(t *testing.T) {
	t.Parallel()
	ids := []uuid.UUID{uuid.New(), uuid.New()}
	sel, err := contacts.ParseSelection(contacts.SelectionInput{Contacts: ids, Exclude: []uuid.UUID{uuid.New()}})
	require.NoError(t, err)
	require.Equal(t, contacts.Selection{Contacts: ids}, sel, "exclude is ignored unless all")

	sel, err = contacts.ParseSelection(contacts.SelectionInput{All: true, Filters: contacts.SearchInput{Query: "ada"}, Exclude: ids})
	require.NoError(t, err)
	require.True(t, sel.All)
	require.Equal(t, "ada", sel.Filter.Query)
	require.Equal(t, ids, sel.Exclude)

	_, err = contacts.ParseSelection(contacts.SelectionInput{})
	requireCode(t, err, "invalid_selection")
	_, err = contacts.ParseSelection(contacts.SelectionInput{All: true, Filters: contacts.SearchInput{LeadStatus: "replied"}})
	requireCode(t, err, "lead_filter_requires_campaign")
}
