package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

func suppressionEntries(values ...string) []api.AddSuppressionsRequestEntriesItem {
	out := make([]api.AddSuppressionsRequestEntriesItem, len(values))
	for i, v := range values {
		out[i] = api.AddSuppressionsRequestEntriesItem{Value: v}
	}
	return out
}

func suppressedValues(l *api.SuppressionListResult) []string {
	out := make([]string, len(l.Data))
	for i, s := range l.Data {
		out[i] = s.Email.Value
	}
	return out
}

func TestSuppressions(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	admin := env.Client(t, boot.APIKey)

	entries := suppressionEntries("Ada <ADA@Example.com>", "@spam.example", "not an address", "ada@example.com", "bob@example.org")
	entries[4].Reason = api.NewOptString("asked by phone")
	res, err := admin.DeliverabilityOpsAddSuppressions(ctx, &api.AddSuppressionsRequest{Entries: entries, Reason: api.NewOptString("cleanup")})
	require.NoError(t, err)
	require.Equal(t, 3, res.Added.Value)
	require.Equal(t, []string{"not an address", "ada@example.com"}, res.Skipped, "invalid values and repeats are skipped")

	// Suppressing again adds nothing and names what was already there.
	res, err = admin.DeliverabilityOpsAddSuppressions(ctx, &api.AddSuppressionsRequest{Entries: suppressionEntries("spam.example", "carol@example.net")})
	require.NoError(t, err)
	require.Equal(t, 1, res.Added.Value)
	require.Equal(t, []string{"spam.example"}, res.Skipped)

	list, err := admin.DeliverabilityOpsListSuppressions(ctx, api.DeliverabilityOpsListSuppressionsParams{})
	require.NoError(t, err)
	require.Equal(t, []string{"carol@example.net", "bob@example.org", "spam.example", "ada@example.com"}, suppressedValues(list))
	byValue := map[string]api.SuppressedRecipient{}
	for _, s := range list.Data {
		byValue[s.Email.Value] = s
	}
	require.Equal(t, api.SuppressedRecipientKindDomain, byValue["spam.example"].Kind.Value)
	require.Equal(t, api.SuppressedRecipientKindEmail, byValue["ada@example.com"].Kind.Value)
	require.Equal(t, "cleanup", byValue["ada@example.com"].Reason.Value)
	require.Equal(t, "asked by phone", byValue["bob@example.org"].Reason.Value)
	require.Equal(t, api.SuppressedRecipientSourceManual, byValue["bob@example.org"].Source.Value)
	require.True(t, byValue["bob@example.org"].ExpiresAt.Null)
	require.Equal(t, boot.OrganizationID, byValue["bob@example.org"].OrganizationID.Value)

	// q matches part of the value, case-insensitively; LIKE wildcards are literal.
	found, err := admin.DeliverabilityOpsListSuppressions(ctx, api.DeliverabilityOpsListSuppressionsParams{Q: api.NewOptString("EXAMPLE.O")})
	require.NoError(t, err)
	require.Equal(t, []string{"bob@example.org"}, suppressedValues(found))
	found, err = admin.DeliverabilityOpsListSuppressions(ctx, api.DeliverabilityOpsListSuppressionsParams{Q: api.NewOptString("%")})
	require.NoError(t, err)
	require.Empty(t, found.Data)

	// Pages of two, newest first.
	page, err := admin.DeliverabilityOpsListSuppressions(ctx, api.DeliverabilityOpsListSuppressionsParams{Limit: api.NewOptInt(2)})
	require.NoError(t, err)
	require.True(t, page.Pagination.Value.HasMore.Value)
	next, err := admin.DeliverabilityOpsListSuppressions(ctx, api.DeliverabilityOpsListSuppressionsParams{Limit: api.NewOptInt(2),
		Cursor: api.NewOptString(page.Pagination.Value.NextCursor.Value)})
	require.NoError(t, err)
	require.Equal(t, []string{"spam.example", "ada@example.com"}, suppressedValues(next))
	require.False(t, next.Pagination.Value.HasMore.Value)
	for _, bad := range []string{"limit=0", "limit=501", "cursor=nope"} {
		require.Equal(t, http.StatusBadRequest, orgRawStatus(t, env, "GET", "/v1/suppressions?"+bad, boot.APIKey, ""), bad)
	}

	// An expired entry no longer suppresses: it is not listed, and suppressing the value again renews it.
	_, err = env.DB.OwnerPool(t).Exec(ctx, `UPDATE suppressions SET expires_at = now() - interval '1 minute' WHERE value = 'carol@example.net'`)
	require.NoError(t, err)
	list, err = admin.DeliverabilityOpsListSuppressions(ctx, api.DeliverabilityOpsListSuppressionsParams{})
	require.NoError(t, err)
	require.NotContains(t, suppressedValues(list), "carol@example.net")
	res, err = admin.DeliverabilityOpsAddSuppressions(ctx, &api.AddSuppressionsRequest{Entries: suppressionEntries("carol@example.net")})
	require.NoError(t, err)
	require.Equal(t, 1, res.Added.Value)

	// Remove: 204, then 404; another organization sees none of it and cannot remove it.
	other := env.Client(t, env.Bootstrap(t, "globex").APIKey)
	otherList, err := other.DeliverabilityOpsListSuppressions(ctx, api.DeliverabilityOpsListSuppressionsParams{})
	require.NoError(t, err)
	require.Empty(t, otherList.Data)
	id := byValue["bob@example.org"].ID.Value
	requireAPIError(t, other.DeliverabilityOpsRemoveSuppression(ctx, api.DeliverabilityOpsRemoveSuppressionParams{ID: id}), 404, "not_found")
	require.NoError(t, admin.DeliverabilityOpsRemoveSuppression(ctx, api.DeliverabilityOpsRemoveSuppressionParams{ID: id}))
	requireAPIError(t, admin.DeliverabilityOpsRemoveSuppression(ctx, api.DeliverabilityOpsRemoveSuppressionParams{ID: id}), 404, "not_found")
	requireAPIError(t, admin.DeliverabilityOpsRemoveSuppression(ctx, api.DeliverabilityOpsRemoveSuppressionParams{ID: uuid.New()}), 404, "not_found")

	actions := orgAuditActions(t, env, boot.OrganizationID)
	require.Equal(t, []string{"suppressions.added", "suppressions.added", "suppressions.added", "suppression.removed"}, actions[len(actions)-4:])

	// Reading needs READ_CONTACTS, changing WRITE_CONTACTS.
	reader := env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadContacts))
	_, err = reader.DeliverabilityOpsListSuppressions(ctx, api.DeliverabilityOpsListSuppressionsParams{})
	require.NoError(t, err)
	_, err = reader.DeliverabilityOpsAddSuppressions(ctx, &api.AddSuppressionsRequest{Entries: suppressionEntries("x@example.com")})
	requireAPIError(t, err, 403, "missing_scope")
}

func TestSuppressionLimits(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	admin := env.Client(t, boot.APIKey)

	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprintf("lead%04d@example.com", i)
	}
	res, err := admin.DeliverabilityOpsAddSuppressions(ctx, &api.AddSuppressionsRequest{Entries: suppressionEntries(many...)})
	require.NoError(t, err)
	require.Equal(t, 5000, res.Added.Value)
	require.Empty(t, res.Skipped)

	body := `{"entries":[` + strings.Repeat(`{"value":"a@example.com"},`, 5000) + `{"value":"b@example.com"}]}`
	require.Equal(t, http.StatusBadRequest, orgRawStatus(t, env, "POST", "/v1/suppressions", boot.APIKey, body))
	_, err = admin.DeliverabilityOpsAddSuppressions(ctx, &api.AddSuppressionsRequest{Entries: suppressionEntries("c@example.com"),
		Reason: api.NewOptString(strings.Repeat("r", 501))})
	requireAPIError(t, err, 400, "invalid_reason")
}
