package usage

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

func TestRecorderBoundsItsQueueAndWritesOnClose(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	acme, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	globex, err := accounts.Bootstrap(ctx, d.Pool, "owner@globex.example", "correct horse battery staple", "globex")
	require.NoError(t, err)

	// The writer is not running yet: the third entry does not fit and is dropped, never waited for.
	r := newRecorder(d.Pool, slog.New(slog.NewJSONHandler(io.Discard, nil)), 3)
	at := time.Now().UTC().Truncate(time.Millisecond)
	entry := func(org, key uuid.UUID, endpoint string, offset time.Duration) Entry {
		return Entry{OrganizationID: org, APIKeyID: key, Endpoint: endpoint, Method: "GET", IP: "192.0.2.1",
			UserAgent: "test", Status: 200, Latency: 3 * time.Millisecond, At: at.Add(offset)}
	}
	r.Record(entry(acme.OrganizationID, acme.APIKeyID, "/first", 0))
	r.Record(entry(globex.OrganizationID, globex.APIKeyID, "/other-org", time.Second))
	// A key that no longer exists (deleted while its requests were queued): its rows are skipped, the batch
	// still lands.
	r.Record(entry(acme.OrganizationID, uuid.New(), "/gone", 2*time.Second))
	r.Record(entry(acme.OrganizationID, acme.APIKeyID, "/overflow", 3*time.Second))
	require.Equal(t, int64(1), r.Dropped())

	go r.writer.Run()
	require.NoError(t, r.Close(ctx))
	r.Record(entry(acme.OrganizationID, acme.APIKeyID, "/after-close", 4*time.Second))

	owner := d.OwnerPool(t)
	rows, err := owner.Query(ctx, `SELECT organization_id, endpoint, response_time_ms FROM api_key_usage_logs ORDER BY created_at`)
	require.NoError(t, err)
	defer rows.Close()
	var got []string
	for rows.Next() {
		var org uuid.UUID
		var endpoint string
		var ms int
		require.NoError(t, rows.Scan(&org, &endpoint, &ms))
		require.Equal(t, 3, ms)
		got = append(got, org.String()+endpoint)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{acme.OrganizationID.String() + "/first", globex.OrganizationID.String() + "/other-org"}, got)

	var last time.Time
	var ip string
	require.NoError(t, owner.QueryRow(ctx, `SELECT last_used_at, last_request_ip FROM api_keys WHERE id = $1`, acme.APIKeyID).Scan(&last, &ip))
	require.True(t, last.Equal(at), "%s != %s", last, at)
	require.Equal(t, "192.0.2.1", ip)
}
