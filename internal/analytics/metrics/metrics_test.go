package metrics_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/analytics/metrics"
)

func TestARateIsAPercentOfItsWholeAndZeroWithoutOne(t *testing.T) {
	require.Zero(t, metrics.Percent(5, 0))
	require.Equal(t, 33.33, metrics.Percent(1, 3))
	require.Equal(t, 66.67, metrics.Percent(2, 3))
	c := metrics.Counters{Sent: 200, Opens: 50, MachineOpens: 10, Clicks: 9, MachineClicks: 1, Replies: 4, BouncesHard: 3,
		BouncesSoft: 1, Complaints: 1, Unsubscribes: 2}
	require.Equal(t, 20.0, c.OpenRate(), "human opens (50 - 10) over 200 sends")
	require.Equal(t, 4.0, c.ClickRate())
	require.Equal(t, 2.0, c.ReplyRate())
	require.Equal(t, 2.0, c.BounceRate(), "hard and soft")
	require.Equal(t, 0.5, c.ComplaintRate())
	require.Equal(t, 1.0, c.UnsubscribeRate())
	require.EqualValues(t, 196, c.Delivered())
	_, ok := c.SpamPlacementRate()
	require.False(t, ok, "no seed samples, no placement rate")
}

func TestTheScoreSaturatesEachPenaltyAtItsFullRate(t *testing.T) {
	score := func(sent, bounces, complaints, inbox, spam int64) float64 {
		return metrics.Counters{Sent: sent, BouncesHard: bounces, Complaints: complaints, PlacementInbox: inbox, PlacementSpam: spam}.Score()
	}
	require.Equal(t, 100.0, score(0, 0, 0, 0, 0), "nothing sent, nothing wrong")
	require.Equal(t, 80.0, score(1000, 50, 0, 0, 0), "5 percent bounces: half of 40 points")
	require.Equal(t, 60.0, score(1000, 100, 0, 0, 0), "10 percent: all 40")
	require.Equal(t, 60.0, score(1000, 500, 0, 0, 0), "beyond 10 percent the penalty stays 40")
	require.Equal(t, 85.0, score(10000, 0, 15, 0, 0), "0.15 percent complaints: half of 30")
	require.Equal(t, 70.0, score(10000, 0, 30, 0, 0), "0.30 percent: all 30")
	require.Equal(t, 70.0, score(10000, 0, 300, 0, 0))
	require.Equal(t, 80.0, score(0, 0, 0, 80, 20), "20 percent spam placement: half of 40")
	require.Equal(t, 60.0, score(0, 0, 0, 60, 40), "40 percent: all 40")
	require.Equal(t, 0.0, score(100, 100, 100, 0, 10), "every penalty full is 110 points; the score stops at 0")
}

func TestTheBandFollowsTheScoreAtItsEdges(t *testing.T) {
	for score, band := range map[float64]string{100: "healthy", 90: "healthy", 89.99: "watch", 75: "watch", 74.99: "throttled",
		50: "throttled", 49.99: "quarantined", 25: "quarantined", 24.99: "blocked", 0: "blocked"} {
		require.Equal(t, band, metrics.Band(score), "score %v", score)
	}
}
