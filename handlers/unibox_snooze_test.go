package handlers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
)

func TestASnoozedThreadLeavesItsUsersListAndReturnsWhenTheSnoozeIsDue(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	ctx := context.Background()
	thread, _ := r.thread(t, r.box.ID, "Come back later", stored{messageID: "<later@client.example>"})
	listed := func() bool {
		page, err := r.session.UniboxList(ctx, api.UniboxListParams{})
		require.NoError(t, err)
		for _, row := range page.Data {
			if row.ThreadID == thread.String() {
				return true
			}
		}
		return false
	}
	require.True(t, listed(), "the thread is listed before it is snoozed")

	until := time.Now().Add(time.Hour).Truncate(time.Second)
	_, err := r.session.UniboxSnooze(ctx, &api.UniboxSnoozeRequest{ThreadID: thread.String(), SnoozedUntil: until}, api.UniboxSnoozeParams{})
	require.NoError(t, err)
	require.False(t, listed(), "a running snooze hides the thread")
	snoozed, err := r.session.UniboxList(ctx, api.UniboxListParams{Snoozed: api.NewOptString("true")})
	require.NoError(t, err)
	require.Len(t, snoozed.Data, 1)
	require.Equal(t, thread.String(), snoozed.Data[0].ThreadID)

	r.env.Clock.Set(until.Add(time.Second))
	require.True(t, listed(), "once due, the thread is back in the list")
	snoozed, err = r.session.UniboxList(ctx, api.UniboxListParams{Snoozed: api.NewOptString("true")})
	require.NoError(t, err)
	require.Empty(t, snoozed.Data, "a due snooze is no longer a snooze")
}
