package delivery_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/eventing/delivery"
)

// TestChallengeGoesOnlyToTheURLItWasScheduledFor: the challenge job of a managed endpoint is skipped once the
// endpoint was removed or points elsewhere; otherwise any 2xx verifies a dashboard endpoint.
func TestChallengeGoesOnlyToTheURLItWasScheduledFor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	recv := newReceiver(t, func(hit) int { return 204 })
	id, secret := b.addEndpoint(t, endpoint{url: recv.URL(), unverified: true})
	recv.accept(secret)

	_, err := b.deliverer.Challenge(ctx, b.org, id, "https://elsewhere.example/hook")
	require.ErrorIs(t, err, delivery.ErrEndpointGone)
	_, err = b.deliverer.Challenge(ctx, b.org, uuid.New(), "")
	require.ErrorIs(t, err, delivery.ErrEndpointGone)
	require.Empty(t, recv.Hits())

	res, err := b.deliverer.Challenge(ctx, b.org, id, recv.URL())
	require.NoError(t, err)
	require.True(t, res.Verified, res.Reason)
	require.Equal(t, 204, res.Status)
	require.NotNil(t, res.VerifiedAt)
	require.Len(t, recv.Hits(), 1)
	recv.requireClean(t)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM webhook_endpoints WHERE id = $1 AND verified_at IS NOT NULL`, id))
}
