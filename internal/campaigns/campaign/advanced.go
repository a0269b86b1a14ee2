package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// Limits of the advanced blocks (part 3 "Advanced overrides object"; where the seed is silent, what the engine
// can honour). Rates are fractions of sends (0.05 = 5 percent), never percents.
const (
	MaxAttempts             = 10
	MinExecutionWindow      = 60
	MaxExecutionWindow      = 86400
	MinSampleSize           = 10
	MaxSampleSize           = 100000
	MaxKeywords             = 100
	MaxKeywordLength        = 100
	MaxOutOfOfficeHoldDays  = 90
	MaxWeekendWeight        = 10
	MaxContentScore         = 100
	MaxUnsubscribeTextChars = 300
)

// WinningRules are the rates an A/B winner is chosen by.
var WinningRules = []string{"open_rate", "click_rate", "reply_rate"}

// CRMTaskIntents are the reply intents that may create a CRM task.
var CRMTaskIntents = []string{"positive", "negative", "question", "neutral", "out_of_office", "automated"}

// UnsubscribeModes are how the unsubscribe line is appended to a body: text, a link, or nothing.
var UnsubscribeModes = []string{"text", "link", "off"}

// BouncePipeline decides what bounces, complaints and unsubscribes do to the audience and the campaign.
type BouncePipeline struct {
	Enabled                     bool    `json:"enabled"`
	AutoSuppressOnBounce        bool    `json:"auto_suppress_on_bounce"`
	AutoSuppressOnComplaint     bool    `json:"auto_suppress_on_complaint"`
	AutoSuppressOnUnsubscribe   bool    `json:"auto_suppress_on_unsubscribe"`
	AutoPauseCampaignOnSpike    bool    `json:"auto_pause_campaign_on_spike"`
	PauseBounceRateThreshold    float64 `json:"pause_bounce_rate_threshold"`
	PauseComplaintRateThreshold float64 `json:"pause_complaint_rate_threshold"`
}

// TaskReliability decides how often and for how long a send task is attempted.
type TaskReliability struct {
	Enabled                bool  `json:"enabled"`
	DLQEnabled             bool  `json:"dlq_enabled"`
	MaxAttempts            int32 `json:"max_attempts"`
	ExecutionWindowSeconds int32 `json:"execution_window_seconds"`
}

// ABTesting decides how A/B variants are judged and whether a winner is promoted on its own.
type ABTesting struct {
	Enabled            bool   `json:"enabled"`
	DefaultWinningRule string `json:"default_winning_rule"`
	AutoPromoteWinner  bool   `json:"auto_promote_winner"`
	MinSampleSize      int32  `json:"min_sample_size"`
}

// ReplyIntent tunes reply classification (keywords beside the built-in rules) and what each intent does.
type ReplyIntent struct {
	Enabled                          bool     `json:"enabled"`
	PositiveKeywords                 []string `json:"positive_keywords"`
	NegativeKeywords                 []string `json:"negative_keywords"`
	OutOfOfficeKeywords              []string `json:"out_of_office_keywords"`
	QuestionKeywords                 []string `json:"question_keywords"`
	AutoCreateCRMTask                bool     `json:"auto_create_crm_task"`
	CRMTaskIntents                   []string `json:"crm_task_intents"`
	AutoPauseOnNegative              bool     `json:"auto_pause_on_negative"`
	AutoSuppressOnUnsubscribeKeyword bool     `json:"auto_suppress_on_unsubscribe_keyword"`
	HoldOnOutOfOffice                bool     `json:"hold_on_out_of_office"`
	OutOfOfficeHoldDays              int32    `json:"out_of_office_hold_days"`
}

// SendTimeOptimization decides when inside the sending window each lead's email goes out.
type SendTimeOptimization struct {
	Enabled            bool `json:"enabled"`
	UseContactTimezone bool `json:"use_contact_timezone"`
	// DefaultContactTimezone is the IANA zone of contacts without one; empty means the campaign's timezone.
	DefaultContactTimezone  string  `json:"default_contact_timezone"`
	PreferredHours          []int   `json:"preferred_hours"`
	WeekendWeightMultiplier float64 `json:"weekend_weight_multiplier"`
}

// Preflight chooses the checks preflight runs before a launch.
type Preflight struct {
	Enabled                  bool  `json:"enabled"`
	CheckTrackingDomain      bool  `json:"check_tracking_domain"`
	CheckUnsubscribeHeader   bool  `json:"check_unsubscribe_header"`
	CheckABVariantConfigured bool  `json:"check_ab_variant_configured"`
	CheckDailyLimit          bool  `json:"check_daily_limit"`
	CheckScheduleWindow      bool  `json:"check_schedule_window"`
	CheckContentScore        bool  `json:"check_content_score"`
	MinContentScore          int32 `json:"min_content_score"`
}

// Dashboard chooses the panels of the campaign dashboard.
type Dashboard struct {
	Enabled            bool `json:"enabled"`
	ShowSuppressionLog bool `json:"show_suppression_log"`
	ShowIntentSummary  bool `json:"show_intent_summary"`
	ShowDLQStats       bool `json:"show_dlq_stats"`
}

// Unsubscribe is the line appended to each body (the List-Unsubscribe header is the campaign's own setting).
type Unsubscribe struct {
	Mode      string `json:"mode"`
	Text      string `json:"text"`
	LinkIntro string `json:"link_intro"`
	LinkText  string `json:"link_text"`
}

// Overrides are a campaign's advanced blocks, every one filled: what the engine, preflight and the inbox read.
type Overrides struct {
	BouncePipeline       BouncePipeline
	TaskReliability      TaskReliability
	ABTesting            ABTesting
	ReplyIntent          ReplyIntent
	SendTimeOptimization SendTimeOptimization
	Preflight            Preflight
	Dashboard            Dashboard
	Unsubscribe          Unsubscribe
}

// Blocks are advanced blocks as sent and as stored: a nil block was not sent (and reads as its defaults). A
// block is always whole, so a block sent replaces the stored one and its defaults never leak into it later.
type Blocks struct {
	BouncePipeline       *BouncePipeline       `json:"bounce_pipeline,omitempty"`
	TaskReliability      *TaskReliability      `json:"task_reliability,omitempty"`
	ABTesting            *ABTesting            `json:"ab_testing,omitempty"`
	ReplyIntent          *ReplyIntent          `json:"reply_intent,omitempty"`
	SendTimeOptimization *SendTimeOptimization `json:"send_time_optimization,omitempty"`
	Preflight            *Preflight            `json:"preflight,omitempty"`
	Dashboard            *Dashboard            `json:"dashboard,omitempty"`
	Unsubscribe          *Unsubscribe          `json:"unsubscribe,omitempty"`
}

// DefaultOverrides are every block's defaults, as the spec's block descriptions state them: protective
// automation on, retries bounded, nothing added to bodies.
func DefaultOverrides() Overrides {
	return Overrides{
		BouncePipeline: BouncePipeline{Enabled: true, AutoSuppressOnBounce: true, AutoSuppressOnComplaint: true,
			AutoSuppressOnUnsubscribe: true, AutoPauseCampaignOnSpike: true, PauseBounceRateThreshold: 0.05,
			PauseComplaintRateThreshold: 0.003},
		TaskReliability: TaskReliability{Enabled: true, DLQEnabled: true, MaxAttempts: 5, ExecutionWindowSeconds: 3600},
		ABTesting:       ABTesting{Enabled: true, DefaultWinningRule: "reply_rate", MinSampleSize: 100},
		ReplyIntent: ReplyIntent{Enabled: true, PositiveKeywords: []string{}, NegativeKeywords: []string{},
			OutOfOfficeKeywords: []string{}, QuestionKeywords: []string{}, CRMTaskIntents: []string{"positive", "question"},
			AutoSuppressOnUnsubscribeKeyword: true, HoldOnOutOfOffice: true, OutOfOfficeHoldDays: 7},
		SendTimeOptimization: SendTimeOptimization{UseContactTimezone: true, PreferredHours: []int{}, WeekendWeightMultiplier: 1},
		Preflight: Preflight{Enabled: true, CheckTrackingDomain: true, CheckUnsubscribeHeader: true,
			CheckABVariantConfigured: true, CheckDailyLimit: true, CheckScheduleWindow: true, CheckContentScore: true,
			MinContentScore: 60},
		Dashboard: Dashboard{Enabled: true, ShowSuppressionLog: true, ShowIntentSummary: true, ShowDLQStats: true},
		Unsubscribe: Unsubscribe{Mode: "off", Text: "If you would rather not hear from me, reply and let me know.",
			LinkIntro: "Not interested?", LinkText: "Unsubscribe"},
	}
}

// With returns o with every block b holds in place of o's.
func (o Overrides) With(b Blocks) Overrides {
	put(&o.BouncePipeline, b.BouncePipeline)
	put(&o.TaskReliability, b.TaskReliability)
	put(&o.ABTesting, b.ABTesting)
	put(&o.ReplyIntent, b.ReplyIntent)
	put(&o.SendTimeOptimization, b.SendTimeOptimization)
	put(&o.Preflight, b.Preflight)
	put(&o.Dashboard, b.Dashboard)
	put(&o.Unsubscribe, b.Unsubscribe)
	return o
}

func put[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// merge returns stored with every block sent replacing the stored one.
func (stored Blocks) merge(sent Blocks) Blocks {
	replace(&stored.BouncePipeline, sent.BouncePipeline)
	replace(&stored.TaskReliability, sent.TaskReliability)
	replace(&stored.ABTesting, sent.ABTesting)
	replace(&stored.ReplyIntent, sent.ReplyIntent)
	replace(&stored.SendTimeOptimization, sent.SendTimeOptimization)
	replace(&stored.Preflight, sent.Preflight)
	replace(&stored.Dashboard, sent.Dashboard)
	replace(&stored.Unsubscribe, sent.Unsubscribe)
	return stored
}

func replace[T any](dst **T, v *T) {
	if v != nil {
		*dst = v
	}
}

// names lists the JSON names of the blocks b holds, for the event and the audit entry.
func (b Blocks) names() []string {
	var out []string
	for _, x := range []struct {
		set  bool
		name string
	}{
		{b.BouncePipeline != nil, "bounce_pipeline"}, {b.TaskReliability != nil, "task_reliability"},
		{b.ABTesting != nil, "ab_testing"}, {b.ReplyIntent != nil, "reply_intent"},
		{b.SendTimeOptimization != nil, "send_time_optimization"}, {b.Preflight != nil, "preflight"},
		{b.Dashboard != nil, "dashboard"}, {b.Unsubscribe != nil, "unsubscribe"},
	} {
		if x.set {
			out = append(out, x.name)
		}
	}
	return out
}

// Advanced reads a campaign's advanced overrides: the stored blocks over the defaults. The engine, preflight
// and the inbox read them here and never parse the column themselves.
func Advanced(c Campaign) (Overrides, error) {
	stored, err := storedBlocks(c.Advanced)
	if err != nil {
		return Overrides{}, err
	}
	return DefaultOverrides().With(stored), nil
}

func storedBlocks(raw []byte) (Blocks, error) {
	var b Blocks
	if len(raw) == 0 {
		return b, nil
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return Blocks{}, fmt.Errorf("campaign: stored advanced blocks: %w", err)
	}
	return b, nil
}

// NormalizeBlocks validates every block b holds, field by field, and returns them in stored form (keywords
// trimmed and de-duplicated ignoring case, intents and hours de-duplicated and sorted). The first broken rule
// is the error; its code names the field (invalid_max_attempts) and its message the block, the field and the
// rule.
func NormalizeBlocks(b Blocks) (Blocks, error) {
	b = b.copied()
	for _, err := range []error{checkBounce(b.BouncePipeline), checkReliability(b.TaskReliability), checkAB(b.ABTesting),
		checkReplyIntent(b.ReplyIntent), checkSendTime(b.SendTimeOptimization), checkPreflight(b.Preflight),
		checkUnsubscribe(b.Unsubscribe)} {
		if err != nil {
			return Blocks{}, err
		}
	}
	return b, nil
}

// copied gives the blocks their own values, so normalizing never writes through a caller's pointers.
func (b Blocks) copied() Blocks {
	return Blocks{BouncePipeline: clone(b.BouncePipeline), TaskReliability: clone(b.TaskReliability),
		ABTesting: clone(b.ABTesting), ReplyIntent: clone(b.ReplyIntent), SendTimeOptimization: clone(b.SendTimeOptimization),
		Preflight: clone(b.Preflight), Dashboard: clone(b.Dashboard), Unsubscribe: clone(b.Unsubscribe)}
}

func clone[T any](v *T) *T {
	if v == nil {
		return nil
	}
	c := *v
	return &c
}

// invalidAt names a broken rule of one block's field: the code is invalid_<field> (invalid_unsubscribe_<field>
// for the unsubscribe block, whose field names are too generic to stand alone), the message block.field rule.
func invalidAt(block, field, rule string) error {
	code := field
	if block == "unsubscribe" {
		code = "unsubscribe_" + field
	}
	return apierror.BadRequest("invalid_"+code, block+"."+field+" "+rule)
}

func checkBounce(b *BouncePipeline) error {
	if b == nil {
		return nil
	}
	for _, f := range []struct {
		field string
		v     float64
	}{{"pause_bounce_rate_threshold", b.PauseBounceRateThreshold}, {"pause_complaint_rate_threshold", b.PauseComplaintRateThreshold}} {
		if !(f.v >= 0 && f.v <= 1) {
			return invalidAt("bounce_pipeline", f.field, "must be a fraction of sends from 0 to 1 (0.05 = 5 percent).")
		}
	}
	return nil
}

func checkReliability(b *TaskReliability) error {
	switch {
	case b == nil:
		return nil
	case b.MaxAttempts < 1 || b.MaxAttempts > MaxAttempts:
		return invalidAt("task_reliability", "max_attempts", fmt.Sprintf("must be 1 to %d.", MaxAttempts))
	case b.ExecutionWindowSeconds < MinExecutionWindow || b.ExecutionWindowSeconds > MaxExecutionWindow:
		return invalidAt("task_reliability", "execution_window_seconds",
			fmt.Sprintf("must be %d to %d seconds.", MinExecutionWindow, MaxExecutionWindow))
	}
	return nil
}

func checkAB(b *ABTesting) error {
	switch {
	case b == nil:
		return nil
	case !slices.Contains(WinningRules, b.DefaultWinningRule):
		return invalidAt("ab_testing", "default_winning_rule", "must be one of "+strings.Join(WinningRules, ", ")+".")
	case b.MinSampleSize < MinSampleSize || b.MinSampleSize > MaxSampleSize:
		return invalidAt("ab_testing", "min_sample_size", fmt.Sprintf("must be %d to %d sends.", MinSampleSize, MaxSampleSize))
	}
	return nil
}

func checkReplyIntent(b *ReplyIntent) error {
	if b == nil {
		return nil
	}
	var err error
	for _, l := range []struct {
		field string
		list  *[]string
	}{
		{"positive_keywords", &b.PositiveKeywords}, {"negative_keywords", &b.NegativeKeywords},
		{"out_of_office_keywords", &b.OutOfOfficeKeywords}, {"question_keywords", &b.QuestionKeywords},
	} {
		if *l.list, err = keywords(l.field, *l.list); err != nil {
			return err
		}
	}
	intents := []string{}
	for _, v := range b.CRMTaskIntents {
		if !slices.Contains(CRMTaskIntents, v) {
			return invalidAt("reply_intent", "crm_task_intents", "may list only "+strings.Join(CRMTaskIntents, ", ")+
				fmt.Sprintf(" (%q is not one).", v))
		}
		if !slices.Contains(intents, v) {
			intents = append(intents, v)
		}
	}
	slices.Sort(intents)
	b.CRMTaskIntents = intents
	if b.OutOfOfficeHoldDays < 1 || b.OutOfOfficeHoldDays > MaxOutOfOfficeHoldDays {
		return invalidAt("reply_intent", "out_of_office_hold_days", fmt.Sprintf("must be 1 to %d days.", MaxOutOfOfficeHoldDays))
	}
	return nil
}

// keywords trims a keyword list and drops repeats ignoring case; an empty keyword, one over the length limit or
// a list over the size limit is refused.
func keywords(field string, in []string) ([]string, error) {
	if len(in) > MaxKeywords {
		return nil, invalidAt("reply_intent", field, fmt.Sprintf("takes at most %d keywords.", MaxKeywords))
	}
	out := make([]string, 0, len(in))
	for i, raw := range in {
		v := strings.TrimSpace(raw)
		if v == "" || utf8.RuneCountInString(v) > MaxKeywordLength || strings.ContainsFunc(v, unicode.IsControl) {
			return nil, invalidAt("reply_intent", field,
				fmt.Sprintf("keywords must be 1 to %d characters on one line (item %d is not).", MaxKeywordLength, i))
		}
		if !slices.ContainsFunc(out, func(k string) bool { return strings.EqualFold(k, v) }) {
			out = append(out, v)
		}
	}
	return out, nil
}

func checkSendTime(b *SendTimeOptimization) error {
	if b == nil {
		return nil
	}
	b.DefaultContactTimezone = strings.TrimSpace(b.DefaultContactTimezone)
	if b.DefaultContactTimezone != "" {
		if _, err := Location(b.DefaultContactTimezone); err != nil {
			return invalidAt("send_time_optimization", "default_contact_timezone",
				"must be an IANA time zone name such as Europe/Berlin, or empty for the campaign's timezone.")
		}
	}
	hours := make([]int, 0, len(b.PreferredHours))
	for _, h := range b.PreferredHours {
		if h < 0 || h > 23 {
			return invalidAt("send_time_optimization", "preferred_hours", fmt.Sprintf("must be hours of the day from 0 to 23 (%d is not).", h))
		}
		if slices.Contains(hours, h) {
			return invalidAt("send_time_optimization", "preferred_hours", fmt.Sprintf("must list each hour once (%d is repeated).", h))
		}
		hours = append(hours, h)
	}
	slices.Sort(hours)
	b.PreferredHours = hours
	if !(b.WeekendWeightMultiplier >= 0 && b.WeekendWeightMultiplier <= MaxWeekendWeight) {
		return invalidAt("send_time_optimization", "weekend_weight_multiplier",
			fmt.Sprintf("must be 0 to %d (0 skips weekends, 1 weighs them as weekdays).", MaxWeekendWeight))
	}
	return nil
}

func checkPreflight(b *Preflight) error {
	if b != nil && (b.MinContentScore < 0 || b.MinContentScore > MaxContentScore) {
		return invalidAt("preflight", "min_content_score", fmt.Sprintf("must be 0 to %d.", MaxContentScore))
	}
	return nil
}

func checkUnsubscribe(b *Unsubscribe) error {
	if b == nil {
		return nil
	}
	if !slices.Contains(UnsubscribeModes, b.Mode) {
		return invalidAt("unsubscribe", "mode", "must be one of "+strings.Join(UnsubscribeModes, ", ")+".")
	}
	for _, f := range []struct {
		field string
		v     *string
	}{{"text", &b.Text}, {"link_intro", &b.LinkIntro}, {"link_text", &b.LinkText}} {
		*f.v = strings.TrimSpace(*f.v)
		if utf8.RuneCountInString(*f.v) > MaxUnsubscribeTextChars || strings.ContainsFunc(*f.v, unicode.IsControl) {
			return invalidAt("unsubscribe", f.field, fmt.Sprintf("must be at most %d characters on one line.", MaxUnsubscribeTextChars))
		}
	}
	switch {
	case b.Mode == "text" && b.Text == "":
		return invalidAt("unsubscribe", "text", "must not be blank when mode is text.")
	case b.Mode == "link" && b.LinkText == "":
		return invalidAt("unsubscribe", "link_text", "must not be blank when mode is link.")
	}
	return nil
}

// writeAdvanced validates the blocks sent, stores them over the campaign's stored blocks and answers the
// names of the blocks written.
func (s *Store) writeAdvanced(ctx context.Context, tx pgx.Tx, row dbq.Campaign, sent Blocks) ([]string, error) {
	sent, err := NormalizeBlocks(sent)
	if err != nil {
		return nil, err
	}
	names := sent.names()
	if len(names) == 0 {
		return nil, nil
	}
	stored, err := storedBlocks(row.Advanced)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(stored.merge(sent))
	if err != nil {
		return nil, err
	}
	now := s.now()
	return names, queries.CampaignAdvancedSet(ctx, tx, dbq.CampaignAdvancedSetParams{Advanced: raw, At: &now,
		OrganizationID: row.OrganizationID, ID: row.ID})
}

// CreateAdvanced stores the advanced blocks of a campaign being created (POST /campaigns's advanced_overrides,
// through CreateInput.Then); the creation's own event and audit entry cover them.
func (s *Store) CreateAdvanced(ctx context.Context, tx pgx.Tx, c Campaign, sent Blocks) error {
	_, err := s.writeAdvanced(ctx, tx, c.Campaign, sent)
	return err
}

// UpdateAdvanced replaces each block sent as a whole and keeps the others, raising campaign.updated and the
// audit entry naming the blocks. Sending no block changes nothing.
func (s *Store) UpdateAdvanced(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, sent Blocks) error {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return err
	}
	names, err := s.writeAdvanced(ctx, tx, row, sent)
	if err != nil || len(names) == 0 {
		return err
	}
	c, err := s.Get(ctx, tx, org, id)
	if err != nil {
		return err
	}
	return s.raise(ctx, tx, c, events.CampaignUpdated, audit.ActionUpdate, map[string]any{"fields": []string{"advanced"}, "blocks": names})
}
