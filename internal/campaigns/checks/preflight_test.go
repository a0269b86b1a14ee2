package checks_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/checks"
)

func keys(r checks.Report) []string {
	out := []string{}
	for _, c := range r.Checks {
		out = append(out, c.Key)
	}
	return out
}

var everyCheck = []string{"steps", "content", "senders", "schedule_window", "daily_limit", "tracking_domain",
	"unsubscribe_header", "ab_variant_configured", "content_score"}

func TestEvaluatePassesAHealthyCampaignWithALinePerCheck(t *testing.T) {
	t.Parallel()
	r := checks.Evaluate(healthy())
	require.True(t, r.Passed)
	require.Equal(t, 100, r.Score)
	require.Equal(t, everyCheck, keys(r))
	for _, c := range r.Checks {
		require.True(t, c.Passed, c.Key)
		require.NotEmpty(t, c.Message, c.Key)
		require.Empty(t, c.Remediation, c.Key)
	}
	require.Empty(t, r.Recommendations)
}

func TestEvaluateRunsOnlyTheChecksTheBlockTurnsOn(t *testing.T) {
	t.Parallel()
	s := healthy()
	s.Campaign.UnsubscribeHeader, s.Campaign.Days, s.Campaign.TrackingDomain = false, 0, "track.example.com"
	s.Preflight.CheckUnsubscribeHeader, s.Preflight.CheckScheduleWindow = false, false
	r := checks.Evaluate(s)
	require.Equal(t, []string{"steps", "content", "senders", "daily_limit", "tracking_domain", "ab_variant_configured", "content_score"}, keys(r))
	require.True(t, r.Passed, "the broken schedule and the missing header are not checked; the unverified domain is a warning")
	require.Equal(t, []string{"Point track.example.com at the tracking host with a CNAME record and verify it (POST /campaigns/{id}/tracking-domain/verify), or clear tracking_domain to use the default tracking host."},
		r.Recommendations, "the fixes of the failed warnings")

	// A disabled block leaves only the checks that always run, whatever its switches say.
	s.Preflight = checks.DefaultPreflight()
	s.Preflight.Enabled = false
	s.Steps[0].BodyPlain = spammy
	r = checks.Evaluate(s)
	require.Equal(t, []string{"steps", "content", "senders"}, keys(r))
	require.True(t, r.Passed)
	require.Equal(t, 59, r.Score, "the score is reported even when it is not checked")

	// The structural checks still fail a report with the block off.
	s.Steps[0].Subject = ""
	r = checks.Evaluate(s)
	require.False(t, r.Passed)
	require.Equal(t, checks.Check{Key: "content", Severity: checks.SeverityError,
		Message: "Step 1 has no subject, but it starts a conversation.", Remediation: "Write a subject for step 1, or set thread_reply to true to reply under the conversation's subject."},
		r.Checks[1])
}

func TestEvaluateFailsBelowMinContentScoreOnlyWhenThatCheckIsOn(t *testing.T) {
	t.Parallel()
	s := healthy()
	s.Steps[0].BodyPlain = spammy
	for _, tc := range []struct {
		name   string
		on     bool
		least  int32
		passed bool
	}{
		{"59 is below the default 60", true, 60, false},
		{"59 meets a minimum of 59", true, 59, true},
		{"59 passes when the check is off", false, 60, true},
	} {
		s.Preflight.CheckContentScore, s.Preflight.MinContentScore = tc.on, tc.least
		r := checks.Evaluate(s)
		require.Equal(t, tc.passed, r.Passed, tc.name)
		require.Equal(t, 59, r.Score, tc.name)
		require.Equal(t, tc.on, keys(r)[len(r.Checks)-1] == "content_score", tc.name)
	}
}

func TestContentScoreIsTheLowestOfTheStepsAndTheirActiveVariants(t *testing.T) {
	t.Parallel()
	s := healthy()
	s.Steps = append(s.Steps, emailStep(1, "Following up", cleanBody+" Reply if useful!"))
	step := uuid.NullUUID{UUID: s.Steps[1].ID, Valid: true}
	require.Equal(t, 100, checks.Evaluate(s).Score)

	// A variant's empty parts are its step's: its subject of 9 words over the step's body of 31 costs 4
	// phrases (20) and 2 capital words of 40 (100 / 40 = 2): 78.
	s.Variants = []checks.Variant{{ID: uuid.New(), StepID: step, Name: "B", Weight: 50, IsActive: true, Subject: "URGENT: act now, click here for a FREE gift"}}
	r := checks.Evaluate(s)
	require.Equal(t, 78, r.Score)

	// Inactive variants and controls are not sent, so they do not score.
	s.Variants[0].IsActive = false
	s.Variants = append(s.Variants, checks.Variant{ID: uuid.New(), StepID: step, Name: "A", Weight: 50, IsActive: true, IsControl: true, BodyPlain: spammy})
	require.Equal(t, 100, checks.Evaluate(s).Score)

	// Messages are rendered for a sample contact: "{{.FullName}}" is the two words "Alex Morgan", so this
	// body has the 20 words that escape too_short.
	s.Variants = nil
	s.Steps = s.Steps[:1]
	s.Steps[0].BodyPlain = "Hi {{.FullName}}, one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen"
	require.Equal(t, 100, checks.Evaluate(s).Score)
	s.Steps[0].BodyPlain = "Hi {{.FirstName}}, one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen"
	require.Equal(t, 90, checks.Evaluate(s).Score)

	// A campaign without an email step has nothing to score.
	s.Steps = nil
	require.Equal(t, 0, checks.Evaluate(s).Score)
}
