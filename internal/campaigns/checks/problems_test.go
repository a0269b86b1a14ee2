package checks_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/checks"
)

var now = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// spammy scores 59 under healthy()'s subject (rendered "Quick question about Example Ltd"): 4 phrases -20,
// 2 capital words of 14 -7, 3 marks -4, 9 words -10.
const spammy = "URGENT: act now, click here for a FREE gift!!!"

func emailStep(pos int32, subject, plain string) campaign.Step {
	return campaign.Step{ID: uuid.New(), Position: pos, Kind: campaign.StepEmail, Subject: subject, BodyPlain: plain, OnTimeout: "continue"}
}

func actionStep(pos int32, action string) campaign.Step {
	return campaign.Step{ID: uuid.New(), Position: pos, Kind: campaign.StepAction, Action: json.RawMessage(action), OnTimeout: "continue"}
}

// healthy is a campaign every check passes: one clean email step, one active mailbox with room, weekdays.
func healthy() checks.Snapshot {
	return checks.Snapshot{
		Campaign: campaign.Campaign{Campaign: dbq.Campaign{ID: uuid.New(), Name: "Launch", Kind: campaign.KindSequence,
			UnsubscribeHeader: true, DailyLimit: 50, Days: 31, StartTime: "09:00", EndTime: "17:00",
			ScheduleWindows: json.RawMessage("[]"), SenderStrategy: campaign.StrategyTags}, EmailTags: []uuid.UUID{}},
		Steps:     []campaign.Step{emailStep(0, "Quick question about {{.Company}}", cleanBody)},
		Pool:      []checks.Mailbox{{ID: uuid.New(), Email: "ada@example.com", Active: true, Enabled: true, DailyCap: 100}},
		Preflight: checks.DefaultPreflight(),
		Now:       now,
	}
}

func codes(ps []checks.Problem) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Code)
	}
	return out
}

func TestProblemsFindsNothingInAHealthyCampaign(t *testing.T) {
	t.Parallel()
	require.Empty(t, checks.Problems(healthy()))
}

func TestProblemsFindEachKindWithAFix(t *testing.T) {
	t.Parallel()
	past := now.Add(-time.Hour)
	for _, tc := range []struct {
		name     string
		edit     func(s *checks.Snapshot)
		code     string
		severity checks.Severity
		// step is the index in s.Steps the problem concerns, -1 for none.
		step int
		// also are the other codes the same snapshot yields, in order.
		also []string
	}{
		{"no steps", func(s *checks.Snapshot) { s.Steps = nil }, checks.CodeNoSteps, checks.SeverityError, -1, nil},
		{"only wait steps", func(s *checks.Snapshot) {
			s.Steps = []campaign.Step{{ID: uuid.New(), Kind: campaign.StepWait, Action: json.RawMessage(`{"wait_minutes": 60}`)}}
		}, checks.CodeNoEmailStep, checks.SeverityError, -1, nil},
		{"an email step without a body", func(s *checks.Snapshot) { s.Steps[0].BodyPlain = "  " },
			checks.CodeStepEmptyBody, checks.SeverityError, 0, nil},
		{"only an HTML body in a text_only campaign", func(s *checks.Snapshot) {
			s.Campaign.TextOnly = true
			s.Steps[0].BodyPlain, s.Steps[0].BodyHTML = "", "<p>"+cleanBody+"</p>"
		}, checks.CodeStepEmptyBody, checks.SeverityError, 0, nil},
		{"a first email step without a subject", func(s *checks.Snapshot) { s.Steps[0].Subject = "" },
			checks.CodeStepEmptySubject, checks.SeverityError, 0, nil},
		{"a follow-up that does not reply in the thread without a subject", func(s *checks.Snapshot) {
			s.Steps = append(s.Steps, emailStep(1, "", cleanBody))
		}, checks.CodeStepEmptySubject, checks.SeverityError, 1, nil},
		{"a template that does not parse", func(s *checks.Snapshot) { s.Steps[0].BodyPlain = cleanBody + " {{.FirstName" },
			checks.CodeTemplateError, checks.SeverityError, 0, nil},
		{"a custom field no contact carries", func(s *checks.Snapshot) {
			s.Steps[0].Subject, s.CustomFieldKeys = "About {{.industry}}", []string{"team_size"}
		}, checks.CodeUnresolvedVariable, checks.SeverityError, 0, nil},
		{"an App value of a later step", func(s *checks.Snapshot) {
			s.Steps[0].BodyPlain = cleanBody + " {{.App.crm.owner}}"
			s.Steps = append(s.Steps, actionStep(1, `{"type": "app_action", "output_key": "crm"}`))
		}, checks.CodeUnresolvedVariable, checks.SeverityError, 0, []string{checks.CodeStepKindUnsupported}},
		{"an App value no step captures", func(s *checks.Snapshot) { s.Steps[0].BodyPlain = cleanBody + " {{.App.crm.owner}}" },
			checks.CodeUnresolvedVariable, checks.SeverityError, 0, nil},
		{"a one_time campaign with two emails", func(s *checks.Snapshot) {
			s.Campaign.Kind = campaign.KindOneTime
			s.Steps = append(s.Steps, emailStep(1, "Again", cleanBody))
		}, checks.CodeOneTimeMultipleEmails, checks.SeverityError, -1, nil},
		{"a first email that replies in a thread", func(s *checks.Snapshot) { s.Steps[0].ThreadReply = true },
			checks.CodeThreadReplyFirstStep, checks.SeverityWarning, 0, nil},
		{"an explicit pool that is empty", func(s *checks.Snapshot) {
			s.Campaign.SenderStrategy, s.Pool = campaign.StrategyExplicit, nil
		}, checks.CodeNoSenders, checks.SeverityError, -1, nil},
		{"an explicit pool whose senders are all disabled", func(s *checks.Snapshot) {
			s.Campaign.SenderStrategy, s.Pool[0].Enabled = campaign.StrategyExplicit, false
		}, checks.CodeNoSenders, checks.SeverityError, -1, nil},
		{"tags that resolve to no active mailbox", func(s *checks.Snapshot) {
			s.Campaign.EmailTags, s.Pool[0].Active = []uuid.UUID{uuid.New()}, false
		}, checks.CodeNoSenders, checks.SeverityError, -1, nil},
		{"an organization without mailboxes", func(s *checks.Snapshot) { s.Pool = nil },
			checks.CodeNoSenders, checks.SeverityError, -1, nil},
		{"no weekday to send on", func(s *checks.Snapshot) { s.Campaign.Days = 0 },
			checks.CodeScheduleNoWindow, checks.SeverityError, -1, nil},
		{"schedule windows that are all empty", func(s *checks.Snapshot) {
			s.Campaign.Days, s.Campaign.ScheduleWindows = 0, json.RawMessage("[[],[],[],[],[],[],[]]")
		}, checks.CodeScheduleNoWindow, checks.SeverityError, -1, nil},
		{"an end date that has passed", func(s *checks.Snapshot) { s.Campaign.EndDate = &past },
			checks.CodeEndBeforeNow, checks.SeverityError, -1, nil},
		{"a daily limit above the pool's caps", func(s *checks.Snapshot) {
			s.Campaign.DailyLimit = 250
			s.Pool = append(s.Pool, checks.Mailbox{ID: uuid.New(), Email: "off@example.com", Active: false, Enabled: true, DailyCap: 500})
		}, checks.CodeDailyLimitAboveCapacity, checks.SeverityWarning, -1, nil},
		{"an unverified tracking domain nothing relies on", func(s *checks.Snapshot) { s.Campaign.TrackingDomain = "track.example.com" },
			checks.CodeTrackingDomainUnverified, checks.SeverityWarning, -1, nil},
		{"an unverified tracking domain link tracking relies on", func(s *checks.Snapshot) {
			s.Campaign.TrackingDomain, s.Campaign.LinkTracking = "track.example.com", true
		}, checks.CodeTrackingDomainUnverified, checks.SeverityError, -1, nil},
		{"no unsubscribe header", func(s *checks.Snapshot) { s.Campaign.UnsubscribeHeader = false },
			checks.CodeUnsubscribeHeaderOff, checks.SeverityWarning, -1, nil},
		{"step variants whose weights sum to 0", func(s *checks.Snapshot) {
			step := uuid.NullUUID{UUID: s.Steps[0].ID, Valid: true}
			s.Variants = []checks.Variant{{ID: uuid.New(), StepID: step, Name: "A", IsControl: true, IsActive: true},
				{ID: uuid.New(), StepID: step, Name: "B", IsActive: true, Subject: "Other subject"}}
		}, checks.CodeABVariantsWeights, checks.SeverityError, 0, nil},
		{"step variants none of which is active", func(s *checks.Snapshot) {
			s.Variants = []checks.Variant{{ID: uuid.New(), StepID: uuid.NullUUID{UUID: s.Steps[0].ID, Valid: true}, Name: "B", Weight: 50}}
		}, checks.CodeABVariantsWeights, checks.SeverityError, 0, nil},
		{"campaign-wide variants whose weights sum to 0", func(s *checks.Snapshot) {
			s.Variants = []checks.Variant{{ID: uuid.New(), Name: "B", IsActive: true}}
		}, checks.CodeABVariantsWeights, checks.SeverityError, -1, nil},
		{"content scoring below the minimum", func(s *checks.Snapshot) { s.Steps[0].BodyPlain = spammy },
			checks.CodeContentScoreLow, checks.SeverityError, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := healthy()
			tc.edit(&s)
			found := checks.Problems(s)
			var p *checks.Problem
			for i := range found {
				if found[i].Code == tc.code {
					require.Nil(t, p, "one %s problem", tc.code)
					p = &found[i]
				}
			}
			require.NotNil(t, p, "%s among %v", tc.code, codes(found))
			require.ElementsMatch(t, append([]string{tc.code}, tc.also...), codes(found))
			require.Equal(t, tc.severity, p.Severity)
			require.NotEmpty(t, p.Message)
			require.NotEmpty(t, p.Fix)
			if tc.step < 0 {
				require.False(t, p.StepID.Valid, "a campaign-level problem names no step")
			} else {
				require.Equal(t, uuid.NullUUID{UUID: s.Steps[tc.step].ID, Valid: true}, p.StepID)
			}
		})
	}
}

func TestUnresolvedVariablesResolveFromContactsEarlierStepsOrFallbacks(t *testing.T) {
	t.Parallel()
	s := healthy()
	s.Steps = []campaign.Step{
		actionStep(0, `{"type": "app_action", "output_key": "crm_lookup"}`),
		emailStep(1, "About {{.Industry}} at {{.Company}}", cleanBody+" {{.App.CrmLookup.owner}} {{.region | default \"your area\"}} {{.Sender.FirstName}}"),
	}
	s.CustomFieldKeys = []string{"industry"}
	require.Equal(t, []string{checks.CodeStepKindUnsupported}, codes(checks.Problems(s)),
		"a custom key present on contacts, an earlier step's App key and a fallback all resolve, by rendering's key rule")

	// One problem per variable, naming every part that uses it.
	s.CustomFieldKeys = nil
	s.Steps[1].BodyPlain = cleanBody + " {{.Industry}}"
	var found []checks.Problem
	for _, p := range checks.Problems(s) {
		if p.Code == checks.CodeUnresolvedVariable {
			found = append(found, p)
		}
	}
	require.Len(t, found, 1)
	require.Contains(t, found[0].Message, "{{.Industry}} in subject and body_plain")
	require.Contains(t, found[0].Fix, `{{.Industry | default "..."}}`)
}

func TestVariantsAreCheckedAsTheMessagesTheySend(t *testing.T) {
	t.Parallel()
	s := healthy()
	step := uuid.NullUUID{UUID: s.Steps[0].ID, Valid: true}
	s.Variants = []checks.Variant{
		{ID: uuid.New(), StepID: step, Name: "B", Weight: 50, IsActive: true, BodyPlain: "{{.Custom.x"},
		{ID: uuid.New(), StepID: step, Name: "Off", Weight: 50, BodyPlain: "{{.Custom.y"},
		{ID: uuid.New(), StepID: step, Name: "Control", Weight: 50, IsActive: true, IsControl: true},
	}
	found := checks.Problems(s)
	require.Equal(t, []string{checks.CodeTemplateError}, codes(found), "inactive variants and controls are not sent, so not parsed")
	require.Contains(t, found[0].Message, `Variant "B" of step 1 body_plain does not parse`)
	require.Equal(t, step, found[0].StepID)
}
