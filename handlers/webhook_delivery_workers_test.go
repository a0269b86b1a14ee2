package handlers_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/eventing/delivery"
	"github.com/outflowhq/outflow/internal/eventing/events"
)

// A receiver that hangs is cut at 15 s while another endpoint's deliveries keep flowing.
func TestWebhookHangingReceiverIsCutWithoutStarvingOthers(t *testing.T) {
	t.Parallel()
	env := wdEnv(t)
	boot := env.Bootstrap(t, "acme")
	client := env.Client(t, boot.APIKey)
	hang := make(chan struct{})
	slow := newWDReceiver(t, func(wdHit) int {
		select {
		case <-hang:
		case <-time.After(20 * time.Second):
		}
		return http.StatusOK
	})
	t.Cleanup(func() { close(hang) }) // before the receiver's Close, which waits for its handlers
	fast := newWDReceiver(t, nil)
	slowID, slowSecret := wdEndpoint(t, env, boot.OrganizationID, slow.URL())
	slow.setSecret(slowSecret)
	fastID, fastSecret := wdEndpoint(t, env, boot.OrganizationID, fast.URL())
	fast.setSecret(fastSecret)
	env.StartWorkers(t)

	start := time.Now()
	ids := wdEmit(t, env, boot.OrganizationID, events.ContactCreated, map[string]any{"n": 1}, map[string]any{"n": 2}, map[string]any{"n": 3})
	// The fast endpoint gets everything while the slow one is stuck.
	require.Eventually(t, func() bool { return len(fast.perEvent(t)) == 3 }, 5*time.Second, 20*time.Millisecond)
	require.Less(t, time.Since(start), 10*time.Second)
	// The receiver has answered; the outcome is recorded just after, so wait for it rather than race it.
	require.Eventually(t, func() bool {
		page, err := client.WebhooksListDeliveries(context.Background(), api.WebhooksListDeliveriesParams{ID: fastID})
		require.NoError(t, err)
		for _, d := range page.Data {
			if d.Status != api.WebhookDeliveryStatusDelivered {
				return false
			}
		}
		return len(page.Data) == 3
	}, 5*time.Second, 20*time.Millisecond)
	// The slow endpoint's attempts end as timeouts after 15 s, not 20.
	require.Eventually(t, func() bool {
		page, err := client.WebhooksListDeliveries(context.Background(), api.WebhooksListDeliveriesParams{ID: slowID})
		require.NoError(t, err)
		for _, d := range page.Data {
			if d.Status != api.WebhookDeliveryStatusFailed {
				return false
			}
		}
		return len(page.Data) == 3
	}, 19*time.Second, 100*time.Millisecond)
	elapsed := time.Since(start)
	require.GreaterOrEqual(t, elapsed, delivery.RequestTimeout)
	require.Less(t, elapsed, 19*time.Second)
	page, err := client.WebhooksListDeliveries(context.Background(), api.WebhooksListDeliveriesParams{ID: slowID})
	require.NoError(t, err)
	for _, d := range page.Data {
		require.Contains(t, ids, d.EventID)
		require.Equal(t, 1, d.AttemptCount)
		require.Contains(t, d.ErrorReason.Or(""), "timeout")
		require.False(t, d.ResponseStatus.Set && !d.ResponseStatus.Null)
	}
	require.EqualValues(t, 3, slow.arrived.Load(), "one attempt each")
}

// Two worker processes deliver each of N events exactly once per endpoint.
func TestWebhookTwoWorkerProcessesDeliverEachEventOnce(t *testing.T) {
	t.Parallel()
	env := wdEnv(t)
	boot := env.Bootstrap(t, "acme")
	a, b := newWDReceiver(t, nil), newWDReceiver(t, nil)
	_, sa := wdEndpoint(t, env, boot.OrganizationID, a.URL())
	a.setSecret(sa)
	_, sb := wdEndpoint(t, env, boot.OrganizationID, b.URL())
	b.setSecret(sb)
	env.StartWorkers(t)
	env.StartWorkers(t)

	const n = 60
	data := make([]map[string]any, n)
	for i := range data {
		data[i] = map[string]any{"n": i}
	}
	var ids []uuid.UUID
	for i := 0; i < n; i += 10 {
		ids = append(ids, wdEmit(t, env, boot.OrganizationID, events.ContactCreated, data[i:i+10]...)...)
	}
	require.Eventually(t, func() bool { return len(a.Hits()) >= n && len(b.Hits()) >= n }, 20*time.Second, 50*time.Millisecond)
	time.Sleep(500 * time.Millisecond) // a double delivery would show up now
	for _, r := range []*wdReceiver{a, b} {
		counts := r.perEvent(t)
		require.Len(t, counts, n)
		for _, id := range ids {
			require.Equal(t, 1, counts[id.String()], "event %s", id)
		}
	}
}
