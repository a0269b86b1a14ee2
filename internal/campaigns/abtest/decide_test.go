package abtest

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// variant is an active variant of step (uuid.Nil: campaign-level) with sent sends, replies and opens.
func variant(name string, step uuid.UUID, sent, replied, opened int64) Counts {
	return Counts{VariantID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(name)), Name: name,
		StepID: uuid.NullUUID{UUID: step, Valid: step != uuid.Nil}, IsActive: true, Sent: sent, Replied: replied, Opened: opened}
}

func name(c *Counts) string {
	if c == nil {
		return ""
	}
	return c.Name
}

// TestDecideJudgesOneGroupByTheZTestOfTheLeaderAgainstTheRunnerUp pins the rule with hand-computed z-scores.
// With 100 sends each and 40 replies between two variants the pooled rate is p = 0.2, so the standard error
// is sqrt(0.2 * 0.8 * (1/100 + 1/100)) = 0.04 * sqrt(2) = 0.056569 and z = (x1 - x2) / 100 / 0.056569
// = (x1 - x2) / (4 sqrt(2)).
func TestDecideJudgesOneGroupByTheZTestOfTheLeaderAgainstTheRunnerUp(t *testing.T) {
	t.Parallel()
	step := uuid.New()
	for _, tc := range []struct {
		name       string
		variants   []Counts
		rule       string
		minSample  int
		winner     string
		runnerUp   string
		z          float64
		confidence string
	}{
		{"22 vs 18 replies: z = 4 / 5.657 = 0.7071, low",
			[]Counts{variant("A", step, 100, 22, 0), variant("B", step, 100, 18, 0)}, "reply_rate", 100, "A", "B", 0.7071, ConfidenceLow},
		{"24 vs 16: z = 8 / 5.657 = 1.4142, still low below 1.645",
			[]Counts{variant("A", step, 100, 16, 0), variant("B", step, 100, 24, 0)}, "reply_rate", 100, "B", "A", 1.4142, ConfidenceLow},
		{"25 vs 15: z = 10 / 5.657 = 1.7678, medium from 1.645",
			[]Counts{variant("A", step, 100, 25, 0), variant("B", step, 100, 15, 0)}, "reply_rate", 100, "A", "B", 1.7678, ConfidenceMedium},
		{"27 vs 13: z = 14 / 5.657 = 2.4749, medium below 2.576",
			[]Counts{variant("A", step, 100, 27, 0), variant("B", step, 100, 13, 0)}, "reply_rate", 100, "A", "B", 2.4749, ConfidenceMedium},
		{"28 vs 12: z = 16 / 5.657 = 2.8284, high from 2.576",
			[]Counts{variant("A", step, 100, 28, 0), variant("B", step, 100, 12, 0)}, "reply_rate", 100, "A", "B", 2.8284, ConfidenceHigh},
		{"30 vs 10: z = 20 / 5.657 = 3.5355, high",
			[]Counts{variant("A", step, 100, 30, 0), variant("B", step, 100, 10, 0)}, "reply_rate", 100, "A", "B", 3.5355, ConfidenceHigh},
		// p1 = 0.2, p2 = 0.15, p = 50/300 = 1/6: se = sqrt(1/6 * 5/6 * (1/100 + 1/200)) = 0.045644, z = 0.05/0.045644.
		{"unequal samples: 20 of 100 vs 30 of 200, z = 1.0954",
			[]Counts{variant("A", step, 200, 30, 0), variant("B", step, 100, 20, 0)}, "reply_rate", 100, "B", "A", 1.0954, ConfidenceLow},
		// The runner-up is the second best, not the last: 30 vs 26 of 100, p = 0.28, se = sqrt(0.28 * 0.72 * 0.02)
		// = 0.063498, z = 0.04 / 0.063498.
		{"three variants: the leader against the second best, z = 0.6299",
			[]Counts{variant("A", step, 100, 10, 0), variant("B", step, 100, 30, 0), variant("C", step, 100, 26, 0)}, "reply_rate", 100, "B", "C", 0.6299, ConfidenceLow},
		{"the rule picks the count: by open rate the other variant leads, z = 3.5355",
			[]Counts{variant("A", step, 100, 30, 10), variant("B", step, 100, 10, 30)}, "open_rate", 100, "B", "A", 3.5355, ConfidenceHigh},
		{"equal rates tie: no winner, low",
			[]Counts{variant("A", step, 100, 20, 0), variant("B", step, 200, 40, 0)}, "reply_rate", 100, "", "", 0, ConfidenceLow},
		{"nothing happened anywhere: a tie at 0",
			[]Counts{variant("A", step, 100, 0, 0), variant("B", step, 100, 0, 0)}, "click_rate", 100, "", "", 0, ConfidenceLow},
		{"one variant short of the sample: no winner however clear",
			[]Counts{variant("A", step, 100, 60, 0), variant("B", step, 99, 1, 0)}, "reply_rate", 100, "", "", 0, ConfidenceInsufficient},
		// p = 7/20 = 0.35, se = sqrt(0.35 * 0.65 * (1/10 + 1/10)) = 0.21331, z = 0.5 / 0.21331.
		{"exactly the sample is enough: 6 vs 1 of 10, z = 2.3440",
			[]Counts{variant("A", step, 10, 6, 0), variant("B", step, 10, 1, 0)}, "reply_rate", 10, "A", "B", 2.3440, ConfidenceMedium},
		{"a lone variant has nothing to beat",
			[]Counts{variant("A", step, 500, 60, 0)}, "reply_rate", 100, "", "", 0, ConfidenceInsufficient},
		{"an unknown rule decides nothing",
			[]Counts{variant("A", step, 100, 30, 0), variant("B", step, 100, 10, 0)}, "bounce_rate", 100, "", "", 0, ConfidenceInsufficient},
	} {
		d := Decide(tc.variants, tc.rule, tc.minSample)
		require.Len(t, d.Groups, 1, tc.name)
		require.Equal(t, tc.winner, name(d.Winner), tc.name)
		if tc.runnerUp != "" {
			require.Equal(t, tc.runnerUp, name(d.RunnerUp), tc.name)
		}
		require.InDelta(t, tc.z, d.Z, 0.0001, tc.name)
		require.Equal(t, tc.confidence, d.Confidence, tc.name)
	}
}

func TestDecideComparesOnlyActiveVariants(t *testing.T) {
	t.Parallel()
	step := uuid.New()
	retired := variant("Retired", step, 0, 0, 0)
	retired.IsActive = false
	best := variant("Best retired", step, 300, 290, 0)
	best.IsActive = false
	d := Decide([]Counts{variant("A", step, 100, 30, 0), retired, best, variant("B", step, 100, 10, 0)}, "reply_rate", 100)
	require.Equal(t, "A", name(d.Winner), "an inactive variant without sends holds nothing back, one with the best rate does not win")
	require.Equal(t, int64(200), d.Sent, "only the variants compared count")

	retired.IsActive = true
	d = Decide([]Counts{variant("A", step, 100, 30, 0), retired, variant("B", step, 100, 10, 0)}, "reply_rate", 100)
	require.Nil(t, d.Winner, "an active variant short of the sample holds the group back")
	require.Equal(t, ConfidenceInsufficient, d.Confidence)
}

func TestDecideReportsTheDecidedGroupWithTheMostSends(t *testing.T) {
	t.Parallel()
	s1, s2 := uuid.New(), uuid.New()
	// Step 1: 28 vs 12 of 100 (z = 2.8284, high), 200 sends. Step 2: 25 vs 15 of 150 each (decided), 300 sends.
	// Campaign-level: 400 sends, but one variant is short of the sample.
	step1 := []Counts{variant("S1 control", s1, 100, 12, 0), variant("S1 alt", s1, 100, 28, 0)}
	step2 := []Counts{variant("S2 control", s2, 150, 25, 0), variant("S2 alt", s2, 150, 15, 0)}
	global := []Counts{variant("G1", uuid.Nil, 350, 100, 0), variant("G2", uuid.Nil, 50, 1, 0)}

	d := Decide(append(append(append([]Counts{}, global...), step1...), step2...), "reply_rate", 100)
	require.Len(t, d.Groups, 3)
	require.False(t, d.Groups[0].StepID.Valid, "groups in the order of their first variant: campaign-level first")
	require.Equal(t, s1, d.Groups[1].StepID.UUID)
	require.Equal(t, ConfidenceInsufficient, d.Groups[0].Confidence)
	require.Equal(t, "S1 alt", name(d.Groups[1].Winner))
	require.Equal(t, "S2 control", name(d.Groups[2].Winner))
	require.Equal(t, "S2 control", name(d.Winner), "the decided group with the most sends, not the largest group")
	require.Equal(t, uuid.NullUUID{UUID: s2, Valid: true}, d.StepID)
	require.Equal(t, int64(300), d.Sent)

	// Equal sends: the earlier group.
	d = Decide(append(append([]Counts{}, step1...), variant("S2 a", s2, 100, 30, 0), variant("S2 b", s2, 100, 10, 0)), "reply_rate", 100)
	require.Equal(t, "S1 alt", name(d.Winner))

	// No group decided: the largest group's verdict speaks for the campaign.
	tie := []Counts{variant("T1", s1, 500, 50, 0), variant("T2", s1, 500, 50, 0)}
	d = Decide(append(append([]Counts{}, global...), tie...), "reply_rate", 100)
	require.Nil(t, d.Winner)
	require.Equal(t, ConfidenceLow, d.Confidence, "the 1,000-send tie, not the 400-send group short of the sample")

	d = Decide(nil, "reply_rate", 100)
	require.Nil(t, d.Winner)
	require.Empty(t, d.Groups)
	require.Equal(t, ConfidenceInsufficient, d.Confidence, "no variants: nothing to decide")
}

func TestRatesAreFractionsOfSendsRoundedToFourPlaces(t *testing.T) {
	t.Parallel()
	c := Counts{Sent: 3, Opened: 2, Clicked: 1, Replied: 0, Bounced: 2, Rejected: 1}
	require.Equal(t, Rates{Open: 0.6667, Click: 0.3333, Reply: 0, Bounce: 0.5}, c.Rates(),
		"bounces over the 3 sent plus the 1 refused")
	require.Equal(t, Rates{Bounce: 1}, Counts{Bounced: 4, Rejected: 4}.Rates(), "only refusals: every attempt bounced")
	require.Equal(t, Rates{}, Counts{}.Rates(), "no sends: 0, not NaN")
	require.Equal(t, 0.1235, Rate(1235, 10000))
	require.Equal(t, 0.0001, Rate(1, 7000), "0.000143 rounds to 0.0001")
}
