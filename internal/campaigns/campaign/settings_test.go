package campaign_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

func code(err error) string {
	var e *apierror.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func at(s string) *time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &t
}

func TestNormalizeHoldsEveryFieldRule(t *testing.T) {
	t.Parallel()
	// 2026-03-10 23:30 UTC is already 2026-03-11 in Tokyo.
	now := *at("2026-03-10T23:30:00Z")
	base := func(edit func(*campaign.Settings)) campaign.Settings {
		s := campaign.Defaults()
		s.Name = "Launch"
		edit(&s)
		return s
	}
	cases := []struct {
		name string
		s    campaign.Settings
		cap  int32
		want string // the error code, "" when valid
	}{
		{"the defaults with a name are valid", base(func(*campaign.Settings) {}), 0, ""},
		{"a name of 256 characters is too long", base(func(s *campaign.Settings) { s.Name = strings.Repeat("n", 256) }), 0, "invalid_name"},
		{"a name with a line break is refused", base(func(s *campaign.Settings) { s.Name = "a\nb" }), 0, "invalid_name"},
		{"a description of 2001 characters is too long", base(func(s *campaign.Settings) { s.Description = strings.Repeat("d", 2001) }), 0, "invalid_description"},
		{"an unknown kind is refused", base(func(s *campaign.Settings) { s.Kind = "drip" }), 0, "invalid_kind"},
		{"daily_limit 100001 is above the maximum", base(func(s *campaign.Settings) { s.DailyLimit = 100001 }), 0, "invalid_daily_limit"},
		{"eleven cc addresses are too many", base(func(s *campaign.Settings) {
			for i := range 11 {
				s.Cc = append(s.Cc, strings.Repeat("a", i+1)+"@example.com")
			}
		}), 0, "invalid_cc"},
		{"a start date earlier today in the campaign zone is still today", base(func(s *campaign.Settings) {
			s.Timezone, s.StartDate = "Asia/Tokyo", at("2026-03-10T15:30:00Z") // 00:30 on the 11th in Tokyo
		}), 0, ""},
		{"a start date on the zone's yesterday is refused", base(func(s *campaign.Settings) {
			s.Timezone, s.StartDate = "Asia/Tokyo", at("2026-03-10T14:30:00Z") // 23:30 on the 10th in Tokyo
		}), 0, "invalid_start_date"},
		{"an end date now is not in the future", base(func(s *campaign.Settings) { s.EndDate = &now }), 0, "invalid_end_date"},
		{"an end before the start is refused", base(func(s *campaign.Settings) {
			s.StartDate, s.EndDate = at("2026-04-02T00:00:00Z"), at("2026-04-01T00:00:00Z")
		}), 0, "invalid_end_date"},
		{"Local is not a campaign zone", base(func(s *campaign.Settings) { s.Timezone = "Local" }), 0, "invalid_timezone"},
		{"days 128 is outside the bitmask", base(func(s *campaign.Settings) { s.Days = 128 }), 0, "invalid_days"},
		{"24:00 ends a day", base(func(s *campaign.Settings) { s.StartTime, s.EndTime = "00:00", "24:00" }), 0, ""},
		{"9:00 without a leading zero is refused", base(func(s *campaign.Settings) { s.StartTime = "9:00" }), 0, "invalid_start_time"},
		{"equal start and end are refused", base(func(s *campaign.Settings) { s.StartTime, s.EndTime = "10:00", "10:00" }), 0, "invalid_end_time"},
		{"a window ending past midnight is refused", base(func(s *campaign.Settings) {
			s.ScheduleWindows = [][]campaign.Window{{{Start: 1380, End: 1441}}, {}, {}, {}, {}, {}, {}}
		}), 0, "invalid_schedule_windows"},
		{"nine windows in a day are too many", base(func(s *campaign.Settings) {
			day := make([]campaign.Window, 9)
			for i := range day {
				day[i] = campaign.Window{Start: i * 60, End: i*60 + 30}
			}
			s.ScheduleWindows = [][]campaign.Window{day, {}, {}, {}, {}, {}, {}}
		}), 0, "invalid_schedule_windows"},
		{"ordering by a custom field names it", base(func(s *campaign.Settings) {
			f := "industry"
			s.ContactOrderBy, s.ContactOrderField = "custom_field", &f
		}), 0, ""},
		{"an unknown rotation is refused", base(func(s *campaign.Settings) { s.RotationMode = "random" }), 0, "invalid_rotation_mode"},
		{"a ramp ceiling above the pool's cap is refused", base(func(s *campaign.Settings) {
			s.RampEnabled, s.RampCeiling = true, 120
		}), 100, "invalid_ramp_ceiling"},
		{"a ramp ceiling at the pool's cap is allowed", base(func(s *campaign.Settings) {
			s.RampEnabled, s.RampCeiling = true, 100
		}), 100, ""},
		{"a ceiling above the cap is kept while the ramp is off", base(func(s *campaign.Settings) { s.RampCeiling = 120 }), 100, ""},
		{"an unknown esp match mode is refused", base(func(s *campaign.Settings) { s.EspMatchMode = "always" }), 0, "invalid_esp_match_mode"},
		{"max_new_leads_per_day below zero is refused", base(func(s *campaign.Settings) { s.MaxNewLeadsPerDay = -1 }), 0, "invalid_max_new_leads_per_day"},
		{"an entry delay of 90 days is the maximum", base(func(s *campaign.Settings) { s.EntryDelayMinutes = 129600 }), 0, ""},
		{"an entry delay past 90 days is refused", base(func(s *campaign.Settings) { s.EntryDelayMinutes = 129601 }), 0, "invalid_entry_delay_minutes"},
		{"a tracking domain needs a dot", base(func(s *campaign.Settings) { s.TrackingDomain = "localhost" }), 0, "invalid_tracking_domain"},
		{"utm_source of 129 characters is too long", base(func(s *campaign.Settings) { s.UtmSource = strings.Repeat("u", 129) }), 0, "invalid_utm_source"},
	}
	for _, tc := range cases {
		_, err := campaign.Normalize(tc.s, campaign.Check{Now: now, MailboxCap: tc.cap})
		require.Equal(t, tc.want, code(err), "%s: %v", tc.name, err)
	}
}

func TestNormalizeStoresACanonicalForm(t *testing.T) {
	t.Parallel()
	s := campaign.Defaults()
	s.Name, s.TextOnly, s.OpenTracking, s.LinkTracking = "  Launch ", true, true, true
	s.Cc = []string{"Boss <BOSS@example.com>", "boss@example.com"}
	s.TrackingDomain = "Track.Example.COM."
	out, err := campaign.Normalize(s, campaign.Check{Now: time.Now()})
	require.NoError(t, err)
	require.Equal(t, "Launch", out.Name)
	require.False(t, out.OpenTracking, "text_only turns tracking off")
	require.False(t, out.LinkTracking)
	require.Equal(t, []string{"boss@example.com"}, out.Cc, "addresses normalized and deduplicated")
	require.Equal(t, "track.example.com", out.TrackingDomain)

	// A date that did not change is not checked against today again (an active campaign's start passes).
	past := time.Now().Add(-72 * time.Hour)
	s.StartDate = &past
	_, err = campaign.Normalize(s, campaign.Check{Now: time.Now(), PrevStart: &past})
	require.NoError(t, err)
}

func TestBuildStepsChainsStepsWithTheSeedDefaults(t *testing.T) {
	t.Parallel()
	str := func(v string) campaign.Field[string] { return campaign.Of(v) }
	steps, err := campaign.BuildSteps([]campaign.StepInput{
		{Subject: str("Quick question")},
		{Subject: str(" Quick question ")},
		{},
		{Kind: str("wait"), Action: campaign.Of(json.RawMessage(`{"wait_minutes": 90}`))},
		{Subject: str("Other"), WaitAfter: campaign.Of[int32](0)},
		{Kind: str("action"), Action: campaign.Of(json.RawMessage(`{"type":"app_action","app_connection_id":"` + uuid.NewString() +
			`","path":"/enrich","output_key":"enriched","inputs":{}}`)), Conditions: campaign.Of(json.RawMessage(`{"if":"x"}`))},
	}, campaign.KindSequence)
	require.NoError(t, err)
	type shape struct {
		wait   int32
		thread bool
		kind   string
	}
	var got []shape
	for i, s := range steps {
		require.EqualValues(t, i, s.Position)
		got = append(got, shape{s.WaitAfter, s.ThreadReply, s.ActionType()})
	}
	require.Equal(t, []shape{{0, false, ""}, {3, true, ""}, {3, true, ""}, {0, false, "wait"}, {0, false, ""}, {0, false, "app_action"}}, got)
	require.JSONEq(t, `{"if":"x"}`, string(steps[5].Conditions), "conditions are kept verbatim")

	for name, in := range map[string]campaign.StepInput{
		"a wait step without minutes":  {Kind: str("wait"), Action: campaign.Of(json.RawMessage(`{}`))},
		"an event wait without a name": {Kind: str("action"), Action: campaign.Of(json.RawMessage(`{"type":"wait_for_event","timeout_minutes":5}`))},
		"an unknown action type":       {Kind: str("action"), Action: campaign.Of(json.RawMessage(`{"type":"sms"}`))},
		"an app action without a path": {Kind: str("action"), Action: campaign.Of(json.RawMessage(`{"type":"app_action","app_connection_id":"` + uuid.NewString() + `","output_key":"k"}`))},
		"an email step with an action": {Subject: str("Hi"), Action: campaign.Of(json.RawMessage(`{"wait_minutes":5}`))},
		"a subject with a line break":  {Subject: str("Hi\r\nBcc: x@example.com")},
		"a wait of 366 days":           {WaitAfter: campaign.Of[int32](366)},
	} {
		_, err := campaign.BuildSteps([]campaign.StepInput{in}, campaign.KindSequence)
		require.Equal(t, "invalid_step", code(err), name)
	}
	_, err = campaign.BuildSteps([]campaign.StepInput{{Subject: str("a")}, {Kind: str("wait"), Action: campaign.Of(json.RawMessage(`{"wait_minutes":5}`))}, {Subject: str("b")}}, campaign.KindOneTime)
	require.Equal(t, "invalid_steps", code(err), "a one_time campaign takes one email step")
}
