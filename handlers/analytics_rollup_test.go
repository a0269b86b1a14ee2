package handlers_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/jx"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/analytics/rollup"
	"github.com/outflowhq/outflow/internal/testkit/rolluptest"
)

// rollupRows is every counter row of the organization whose counters are not all zero, one line each
// ("table key: counters" as Postgres writes the array of them, in the migration's column order).
func (r *trackRig) rollupRows(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := rolluptest.Rows(ctx, tx, r.org)
		for k, c := range rows {
			v := rolluptest.Values(c)
			s := make([]string, len(v))
			for i, n := range v {
				s[i] = strconv.FormatInt(n, 10)
			}
			out[k] = "{" + strings.Join(s, ",") + "}"
		}
		return err
	})
	return out
}

// rebuild recomputes the organization's rollups from the source rows, as `outflow admin rollups rebuild` does.
func (r *trackRig) rebuild(t *testing.T) {
	t.Helper()
	r.query(t, func(ctx context.Context, tx pgx.Tx) error { return rollup.Rebuild(ctx, tx, r.org) })
}

func TestIngestedEventsFeedTheRollupsAsARebuildCountsThem(t *testing.T) {
	t.Parallel()
	r := newTrackRig(t)
	sent := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC)
	task, other := r.send(t, sent), r.send(t, sent.Add(time.Minute))
	// The sends were stored as the pipeline leaves them, without its feed: a rebuild counts them first.
	r.rebuild(t)
	require.Equal(t, map[string]string{
		"analytics_org_days 2026-03-01 campaign": "{2,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0}",
	}, filter(r.rollupRows(t), "analytics_org_days"))

	meta := func(kv ...string) api.OptIngestDeliverabilityEventRequestMetadata {
		m := api.IngestDeliverabilityEventRequestMetadata{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = jx.Raw(`"` + kv[i+1] + `"`)
		}
		return api.NewOptIngestDeliverabilityEventRequestMetadata(m)
	}
	ev := func(kind api.IngestDeliverabilityEventRequestEventType, task *api.OptUUID) api.IngestDeliverabilityEventRequest {
		req := api.IngestDeliverabilityEventRequest{EventType: kind, RecipientEmail: "ada@example.net", Provider: api.NewOptString("ses")}
		if task != nil {
			req.TaskID = *task
		}
		return req
	}
	first, second := api.NewOptUUID(task), api.NewOptUUID(other)
	// A machine's open then a person's, on the first send; a person's click on the second.
	require.NoError(t, r.ingest(t, ev(api.IngestDeliverabilityEventRequestEventTypeOpen, &first), ""))
	human := ev(api.IngestDeliverabilityEventRequestEventTypeOpen, &first)
	human.Metadata = meta("user_agent", browserUA, "ip", "192.0.2.10")
	require.NoError(t, r.ingest(t, human, ""))
	click := ev(api.IngestDeliverabilityEventRequestEventTypeClick, &second)
	click.Metadata = meta("user_agent", browserUA, "url", trackedDemo)
	require.NoError(t, r.ingest(t, click, ""))
	// A hard bounce (twice under one key), a soft one, a complaint, a reply, and an unsubscribe naming only the
	// campaign.
	bounce := ev(api.IngestDeliverabilityEventRequestEventTypeBounce, &first)
	bounce.Reason = api.NewOptString("smtp; 550 5.1.1 <ada@example.net>: Recipient address rejected: User unknown")
	require.NoError(t, r.ingest(t, bounce, "bounce-1"))
	require.NoError(t, r.ingest(t, bounce, "bounce-1"))
	soft := ev(api.IngestDeliverabilityEventRequestEventTypeBounce, &second)
	soft.Metadata = meta("bounce_type", "soft")
	require.NoError(t, r.ingest(t, soft, ""))
	require.NoError(t, r.ingest(t, ev(api.IngestDeliverabilityEventRequestEventTypeComplaint, &second), ""))
	require.NoError(t, r.ingest(t, ev(api.IngestDeliverabilityEventRequestEventTypeReply, &second), ""))
	unsub := ev(api.IngestDeliverabilityEventRequestEventTypeUnsubscribe, nil)
	unsub.CampaignID = api.NewOptUUID(r.camp)
	require.NoError(t, r.ingest(t, unsub, ""))

	fed := r.rollupRows(t)
	var total [18]int64
	for k, v := range filter(fed, "analytics_org_days") {
		require.Contains(t, k, " campaign")
		var c [18]int64
		_, err := fmt.Sscanf(v, "{%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d}", &c[0], &c[1], &c[2], &c[3], &c[4],
			&c[5], &c[6], &c[7], &c[8], &c[9], &c[10], &c[11], &c[12], &c[13], &c[14], &c[15], &c[16], &c[17])
		require.NoError(t, err)
		for i := range c {
			total[i] += c[i]
		}
	}
	// sent, opens, machine_opens, clicks, machine_clicks, replies, intents (6), hard, soft, complaints, unsubscribes.
	require.Equal(t, [18]int64{2, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0}, total,
		"the person's open took the machine's back; the bounce posted twice under one key counts once")
	r.rebuild(t)
	require.Equal(t, fed, r.rollupRows(t), "a rebuild from the source rows equals what the feeds added up")
}

// filter keeps the rows of one table.
func filter(rows map[string]string, table string) map[string]string {
	out := map[string]string{}
	for k, v := range rows {
		if len(k) > len(table) && k[:len(table)+1] == table+" " {
			out[k] = v
		}
	}
	return out
}
