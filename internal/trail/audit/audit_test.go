package audit_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

func TestRecordNamesTheActorAndRedactsSecrets(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	res, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	keyID := uuid.New()

	ctx = reqctx.With(ctx, reqctx.Info{ID: "req_1", ClientIP: "203.0.113.9", UserAgent: "agent/1.0"})
	ctx = auth.WithPrincipal(ctx, &auth.Principal{Kind: auth.KindAPIKey, CredentialID: keyID, OrganizationID: res.OrganizationID})
	err = db.WithOrgTx(ctx, d.Pool, res.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		return audit.Record(ctx, tx, audit.Entry{
			Action: audit.ActionCreate, Event: "webhook.created", EntityType: audit.EntityWebhook, EntityID: "wh_1",
			Metadata: map[string]any{
				"url":         "https://example.com/hook",
				"secret":      "whsec_live",
				"nested":      map[string]any{"Password": "p", "events": []any{"a", map[string]any{"api_key": "ofk_x"}}},
				"AccessToken": "t",
			},
		})
	})
	require.NoError(t, err)

	var actorType, actorID, ip, ua, reqID string
	var meta []byte
	require.NoError(t, d.OwnerPool(t).QueryRow(context.Background(), `SELECT actor_type, actor_id::text, ip_address, user_agent, request_id, metadata
		FROM audit_log WHERE event = 'webhook.created'`).Scan(&actorType, &actorID, &ip, &ua, &reqID, &meta))
	require.Equal(t, "api_key", actorType)
	require.Equal(t, keyID.String(), actorID)
	require.Equal(t, "203.0.113.9", ip)
	require.Equal(t, "agent/1.0", ua)
	require.Equal(t, "req_1", reqID)

	var got map[string]any
	require.NoError(t, json.Unmarshal(meta, &got))
	require.Equal(t, map[string]any{
		"url":         "https://example.com/hook",
		"secret":      audit.Redacted,
		"AccessToken": audit.Redacted,
		"nested":      map[string]any{"Password": audit.Redacted, "events": []any{"a", map[string]any{"api_key": audit.Redacted}}},
	}, got)
	require.NotContains(t, string(meta), "whsec_live")
}

func TestRecordWithoutAPrincipalIsTheSystem(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	res, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	err = db.WithOrgTx(ctx, d.Pool, res.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "sweep.ran"})
	})
	require.NoError(t, err)
	var actorType string
	var actorID *string
	require.NoError(t, d.OwnerPool(t).QueryRow(ctx, "SELECT actor_type, actor_id::text FROM audit_log WHERE event = 'sweep.ran'").Scan(&actorType, &actorID))
	require.Equal(t, "system", actorType)
	require.Nil(t, actorID)

	require.ErrorContains(t, db.WithTx(ctx, d.Pool, func(ctx context.Context, tx pgx.Tx) error {
		return audit.Record(ctx, tx, audit.Entry{Action: "x"})
	}), "outside an organization-scoped transaction")
}
