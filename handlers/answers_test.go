package handlers_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
)

// The writes that add leads answer 200, or 202 when an agent's leads for campaigns that send wait for a person
// (see lead_gate_test.go). These take the 200 answer, failing the test on a 202.

func createdOK(t testing.TB, res api.ContactsCreateRes) []api.Contact {
	t.Helper()
	ok, is := res.(*api.ContactsCreateOKApplicationJSON)
	require.True(t, is, "want 200, got %T", res)
	return *ok
}

func bulkUpdatedOK(t testing.TB, res api.ContactsBulkUpdateRes) []api.Contact {
	t.Helper()
	ok, is := res.(*api.ContactsBulkUpdateOKApplicationJSON)
	require.True(t, is, "want 200, got %T", res)
	return *ok
}

func contactUpdatedOK(t testing.TB, res api.ContactsUpdateRes) *api.Contact {
	t.Helper()
	ok, is := res.(*api.Contact)
	require.True(t, is, "want 200, got %T", res)
	return ok
}

func campaignUpdatedOK(t testing.TB, res api.CampaignsUpdateRes) *api.Campaign {
	t.Helper()
	ok, is := res.(*api.Campaign)
	require.True(t, is, "want 200, got %T", res)
	return ok
}

func importedOK(t testing.TB, res api.ContactsImportCommitRes) *api.ContactImportResult {
	t.Helper()
	ok, is := res.(*api.ContactsImportCommitOK)
	require.True(t, is, "want 200, got %T", res)
	out := api.ContactImportResult(*ok)
	return &out
}

func membersAddedOK(t testing.TB, res api.SegmentsMembersAddRes) *api.SegmentMembersChange {
	t.Helper()
	ok, is := res.(*api.SegmentsMembersAddOK)
	require.True(t, is, "want 200, got %T", res)
	out := api.SegmentMembersChange(*ok)
	return &out
}
