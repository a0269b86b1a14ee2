package campaign

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Limits of a campaign's fields (part 3 "Campaign"; where the seed is silent, what a sender needs).
const (
	MaxName              = 255
	MaxDescription       = 2000
	MaxCopies            = 10 // cc and bcc addresses each
	MaxDailyLimit        = 100000
	MaxRamp              = 5000
	MaxNewLeadsPerDay    = 1000000
	MaxEntryDelayMinutes = 129600
	MaxUTM               = 128
	MaxWindowsPerDay     = 8
	// DefaultMailboxCap is the per-mailbox daily cap a ramp ceiling is held to when no sender resolves yet.
	DefaultMailboxCap = 50
)

// Kinds, statuses and enumerations of the campaign fields.
const (
	KindSequence = "sequence"
	KindOneTime  = "one_time"

	StatusDraft              = "draft"
	StatusActive             = "active"
	StatusPaused             = "paused"
	StatusPausedNoAccounts   = "paused_no_accounts"
	StatusPausedTrialExpired = "paused_trial_expired"
	StatusCompleted          = "completed"

	StrategyTags     = "tags"
	StrategyExplicit = "explicit"
)

// RotationModes are the sender rotations the engine knows; any other value is refused.
var RotationModes = []string{"round_robin", "weighted", "least_used"}

// OrderFields are the lead orderings; custom_field orders by contact_order_field.
var OrderFields = []string{"created_at", "first_name", "last_name", "email", "company", "custom_field"}

// Window is one sending window of a weekday, in minutes of the day [Start, End).
type Window struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Settings are a campaign's editable fields as stored.
type Settings struct {
	Name, Description                                 string
	Kind                                              string
	StopOnReply, OpenTracking, LinkTracking, TextOnly bool
	UnsubscribeHeader, RiskyEmails                    bool
	DailyLimit                                        int32
	Cc, Bcc                                           []string
	StartDate, EndDate                                *time.Time
	Timezone                                          string
	Days                                              int16
	StartTime, EndTime                                string
	ScheduleWindows                                   [][]Window
	ContactOrderBy, ContactOrderDir                   string
	ContactOrderField                                 *string
	SenderStrategy, RotationMode                      string
	RampEnabled                                       bool
	RampStart, RampIncrement, RampCeiling             int32
	EspMatchMode                                      string
	MaxNewLeadsPerDay                                 int32
	PrioritizeNewLeads                                bool
	EntryDelayMinutes                                 int32
	Continuous                                        bool
	TrackingDomain                                    string
	UtmTracking                                       bool
	UtmSource, UtmMedium, UtmCampaign                 string
}

// Defaults are a new campaign's settings before the caller's fields apply.
func Defaults() Settings {
	return Settings{
		Kind: KindSequence, StopOnReply: true, UnsubscribeHeader: true, DailyLimit: 50, Cc: []string{}, Bcc: []string{},
		Timezone: "UTC", Days: 31, StartTime: "09:00", EndTime: "17:00", ContactOrderBy: "created_at",
		ContactOrderDir: "asc", SenderStrategy: StrategyTags, RotationMode: "round_robin", RampStart: 10,
		RampIncrement: 5, RampCeiling: 50, EspMatchMode: "off",
	}
}

// Field is one optional input field: Set says the caller sent it (a null included, for the nullable ones).
type Field[T any] struct {
	Set   bool
	Value T
}

// Of is a sent field.
func Of[T any](v T) Field[T] { return Field[T]{Set: true, Value: v} }

func (f Field[T]) apply(dst *T) {
	if f.Set {
		*dst = f.Value
	}
}

// Patch is the fields a create or an update sends; unset fields keep their value.
type Patch struct {
	Name, Description                                 Field[string]
	Kind                                              Field[string]
	StopOnReply, OpenTracking, LinkTracking, TextOnly Field[bool]
	UnsubscribeHeader, RiskyEmails                    Field[bool]
	DailyLimit                                        Field[int32]
	Cc, Bcc                                           Field[[]string]
	StartDate, EndDate                                Field[*time.Time]
	Timezone                                          Field[string]
	Days                                              Field[int16]
	StartTime, EndTime                                Field[string]
	ScheduleWindows                                   Field[[][]Window]
	ContactOrderBy, ContactOrderDir                   Field[string]
	ContactOrderField                                 Field[*string]
	SenderStrategy, RotationMode                      Field[string]
	RampEnabled                                       Field[bool]
	RampStart, RampIncrement, RampCeiling             Field[int32]
	EspMatchMode                                      Field[string]
	MaxNewLeadsPerDay                                 Field[int32]
	PrioritizeNewLeads                                Field[bool]
	EntryDelayMinutes                                 Field[int32]
	Continuous                                        Field[bool]
	TrackingDomain                                    Field[string]
	UtmTracking                                       Field[bool]
	UtmSource, UtmMedium, UtmCampaign                 Field[string]
}

// Apply returns s with the sent fields of p.
func (p Patch) Apply(s Settings) Settings {
	p.Name.apply(&s.Name)
	p.Description.apply(&s.Description)
	p.Kind.apply(&s.Kind)
	p.StopOnReply.apply(&s.StopOnReply)
	p.OpenTracking.apply(&s.OpenTracking)
	p.LinkTracking.apply(&s.LinkTracking)
	p.TextOnly.apply(&s.TextOnly)
	p.UnsubscribeHeader.apply(&s.UnsubscribeHeader)
	p.RiskyEmails.apply(&s.RiskyEmails)
	p.DailyLimit.apply(&s.DailyLimit)
	p.Cc.apply(&s.Cc)
	p.Bcc.apply(&s.Bcc)
	p.StartDate.apply(&s.StartDate)
	p.EndDate.apply(&s.EndDate)
	p.Timezone.apply(&s.Timezone)
	p.Days.apply(&s.Days)
	p.StartTime.apply(&s.StartTime)
	p.EndTime.apply(&s.EndTime)
	p.ScheduleWindows.apply(&s.ScheduleWindows)
	p.ContactOrderBy.apply(&s.ContactOrderBy)
	p.ContactOrderDir.apply(&s.ContactOrderDir)
	p.ContactOrderField.apply(&s.ContactOrderField)
	p.SenderStrategy.apply(&s.SenderStrategy)
	p.RotationMode.apply(&s.RotationMode)
	p.RampEnabled.apply(&s.RampEnabled)
	p.RampStart.apply(&s.RampStart)
	p.RampIncrement.apply(&s.RampIncrement)
	p.RampCeiling.apply(&s.RampCeiling)
	p.EspMatchMode.apply(&s.EspMatchMode)
	p.MaxNewLeadsPerDay.apply(&s.MaxNewLeadsPerDay)
	p.PrioritizeNewLeads.apply(&s.PrioritizeNewLeads)
	p.EntryDelayMinutes.apply(&s.EntryDelayMinutes)
	p.Continuous.apply(&s.Continuous)
	p.TrackingDomain.apply(&s.TrackingDomain)
	p.UtmTracking.apply(&s.UtmTracking)
	p.UtmSource.apply(&s.UtmSource)
	p.UtmMedium.apply(&s.UtmMedium)
	p.UtmCampaign.apply(&s.UtmCampaign)
	return s
}

// Schedule reports whether p changes when or how much the campaign may send: the schedule, its limits, ramp and
// quota, or how senders are chosen (an active campaign makes its waiting leads due at once, so the engine
// re-decides them under the new settings).
func (p Patch) Schedule() bool {
	return p.StartDate.Set || p.EndDate.Set || p.Timezone.Set || p.Days.Set || p.StartTime.Set || p.EndTime.Set ||
		p.ScheduleWindows.Set || p.EntryDelayMinutes.Set || p.DailyLimit.Set || p.RampEnabled.Set ||
		p.RampStart.Set || p.RampIncrement.Set || p.RampCeiling.Set || p.MaxNewLeadsPerDay.Set ||
		p.EspMatchMode.Set || p.SenderStrategy.Set || p.RotationMode.Set
}

func invalid(field, rule string) error {
	return apierror.BadRequest("invalid_"+field, field+" "+rule)
}

var clock = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)

func minutes(hhmm string) int {
	var h, m int
	fmt.Sscanf(hhmm, "%d:%d", &h, &m)
	return h*60 + m
}

// Check holds what validation needs beyond the settings: the time now, the previous dates (a date that did
// not change is not re-checked against today) and the per-mailbox cap the ramp ceiling is held to.
type Check struct {
	Now                time.Time
	PrevStart, PrevEnd *time.Time
	MailboxCap         int32
}

// Normalize validates s field by field and returns it in stored form (trimmed, addresses normalized, text_only
// turning tracking off). The first broken rule is the error, naming the field and the rule.
func Normalize(s Settings, c Check) (Settings, error) {
	s.Name = strings.TrimSpace(s.Name)
	if n := utf8.RuneCountInString(s.Name); n == 0 || n > MaxName || strings.ContainsFunc(s.Name, unicode.IsControl) {
		return s, invalid("name", fmt.Sprintf("must be 1 to %d characters on one line.", MaxName))
	}
	s.Description = strings.TrimSpace(s.Description)
	if utf8.RuneCountInString(s.Description) > MaxDescription {
		return s, invalid("description", fmt.Sprintf("must be at most %d characters.", MaxDescription))
	}
	if s.Kind != KindSequence && s.Kind != KindOneTime {
		return s, invalid("kind", "must be sequence or one_time.")
	}
	if s.DailyLimit < 1 || s.DailyLimit > MaxDailyLimit {
		return s, invalid("daily_limit", fmt.Sprintf("must be 1 to %d.", MaxDailyLimit))
	}
	var err error
	if s.Cc, err = addresses("cc", s.Cc); err != nil {
		return s, err
	}
	if s.Bcc, err = addresses("bcc", s.Bcc); err != nil {
		return s, err
	}
	loc, err := Location(s.Timezone)
	if err != nil {
		return s, err
	}
	if err := dates(s, c, loc); err != nil {
		return s, err
	}
	if s.Days < 0 || s.Days > 127 {
		return s, invalid("days", "must be a weekday bitmask from 0 to 127 (bit 0 = Monday).")
	}
	if !clock.MatchString(s.StartTime) {
		return s, invalid("start_time", "must be a time of day as HH:MM (00:00 to 23:59).")
	}
	if !clock.MatchString(s.EndTime) && s.EndTime != "24:00" {
		return s, invalid("end_time", "must be a time of day as HH:MM (00:01 to 24:00).")
	}
	if minutes(s.StartTime) >= minutes(s.EndTime) {
		return s, invalid("end_time", "must be after start_time (use schedule_windows for other shapes).")
	}
	if err := windows(s.ScheduleWindows); err != nil {
		return s, err
	}
	if !slices.Contains(OrderFields, s.ContactOrderBy) {
		return s, invalid("contact_order_by", "must be one of "+strings.Join(OrderFields, ", ")+".")
	}
	if s.ContactOrderDir != "asc" && s.ContactOrderDir != "desc" {
		return s, invalid("contact_order_dir", "must be asc or desc.")
	}
	if s.ContactOrderBy == "custom_field" && (s.ContactOrderField == nil || strings.TrimSpace(*s.ContactOrderField) == "" || len(*s.ContactOrderField) > 64) {
		return s, invalid("contact_order_field", "must name a custom field (1 to 64 characters) when contact_order_by is custom_field.")
	}
	if s.SenderStrategy != StrategyTags && s.SenderStrategy != StrategyExplicit {
		return s, invalid("sender_strategy", "must be tags or explicit.")
	}
	if !slices.Contains(RotationModes, s.RotationMode) {
		return s, invalid("rotation_mode", "must be one of "+strings.Join(RotationModes, ", ")+".")
	}
	if err := ramp(s, c); err != nil {
		return s, err
	}
	if s.EspMatchMode != "off" && s.EspMatchMode != "prefer" && s.EspMatchMode != "strict" {
		return s, invalid("esp_match_mode", "must be off, prefer or strict.")
	}
	if s.MaxNewLeadsPerDay < 0 || s.MaxNewLeadsPerDay > MaxNewLeadsPerDay {
		return s, invalid("max_new_leads_per_day", fmt.Sprintf("must be 0 (unlimited) to %d.", MaxNewLeadsPerDay))
	}
	if s.EntryDelayMinutes < 0 || s.EntryDelayMinutes > MaxEntryDelayMinutes {
		return s, invalid("entry_delay_minutes", fmt.Sprintf("must be 0 to %d (90 days).", MaxEntryDelayMinutes))
	}
	if s.TrackingDomain, err = trackingDomain(s.TrackingDomain); err != nil {
		return s, err
	}
	for name, v := range map[string]*string{"utm_source": &s.UtmSource, "utm_medium": &s.UtmMedium, "utm_campaign": &s.UtmCampaign} {
		*v = strings.TrimSpace(*v)
		if utf8.RuneCountInString(*v) > MaxUTM || strings.ContainsFunc(*v, unicode.IsControl) {
			return s, invalid(name, fmt.Sprintf("must be at most %d characters on one line.", MaxUTM))
		}
	}
	if s.TextOnly {
		s.OpenTracking, s.LinkTracking = false, false
	}
	return s, nil
}

// Location loads an IANA zone name for a campaign schedule.
func Location(name string) (*time.Location, error) {
	refused := func() error {
		return apierror.BadRequest("invalid_timezone", fmt.Sprintf("timezone must be an IANA time zone name such as Europe/Berlin; %q is not one.", name)).
			WithFix("GET /timezones lists the zones.")
	}
	if name == "" || name == "Local" || len(name) > 64 {
		return nil, refused()
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, refused()
	}
	return loc, nil
}

func dates(s Settings, c Check, loc *time.Location) error {
	changed := func(v, prev *time.Time) bool { return v != nil && (prev == nil || !v.Equal(*prev)) }
	if changed(s.StartDate, c.PrevStart) {
		y, m, d := c.Now.In(loc).Date()
		if s.StartDate.Before(time.Date(y, m, d, 0, 0, 0, 0, loc)) {
			return invalid("start_date", "must be today or later (in the campaign's timezone), or null.")
		}
	}
	if changed(s.EndDate, c.PrevEnd) && !s.EndDate.After(c.Now) {
		return invalid("end_date", "must be in the future, or null.")
	}
	if s.StartDate != nil && s.EndDate != nil && !s.EndDate.After(*s.StartDate) {
		return invalid("end_date", "must be after start_date.")
	}
	return nil
}

func windows(w [][]Window) error {
	if len(w) == 0 {
		return nil
	}
	if len(w) != 7 {
		return invalid("schedule_windows", "must be empty or 7 arrays, one per weekday (Sunday = 0).")
	}
	for day, ws := range w {
		if len(ws) > MaxWindowsPerDay {
			return invalid("schedule_windows", fmt.Sprintf("allows at most %d windows per day (day %d has %d).", MaxWindowsPerDay, day, len(ws)))
		}
		prevEnd := -1
		for _, x := range ws {
			if x.Start < 0 || x.End > 1440 || x.Start >= x.End {
				return invalid("schedule_windows", fmt.Sprintf("windows are {start, end} minutes of the day with 0 <= start < end <= 1440 (day %d has %d-%d).", day, x.Start, x.End))
			}
			if x.Start < prevEnd {
				return invalid("schedule_windows", fmt.Sprintf("windows of a day must be in order and not overlap (day %d).", day))
			}
			prevEnd = x.End
		}
	}
	return nil
}

func ramp(s Settings, c Check) error {
	if s.RampStart < 1 || s.RampStart > MaxRamp {
		return invalid("ramp_start", fmt.Sprintf("must be 1 to %d.", MaxRamp))
	}
	if s.RampIncrement < 0 || s.RampIncrement > MaxRamp {
		return invalid("ramp_increment", fmt.Sprintf("must be 0 to %d.", MaxRamp))
	}
	if s.RampCeiling < 1 || s.RampCeiling > MaxRamp {
		return invalid("ramp_ceiling", fmt.Sprintf("must be 1 to %d.", MaxRamp))
	}
	if s.RampStart > s.RampCeiling {
		return invalid("ramp_start", "must not be above ramp_ceiling.")
	}
	if capacity := max(c.MailboxCap, DefaultMailboxCap); s.RampEnabled && s.RampCeiling > capacity {
		return invalid("ramp_ceiling", fmt.Sprintf("must not exceed the per-mailbox cap (%d).", capacity))
	}
	return nil
}

var hostLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

func trackingDomain(v string) (string, error) {
	v = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(v)), ".")
	if v == "" {
		return "", nil
	}
	labels := strings.Split(v, ".")
	if len(v) > 253 || len(labels) < 2 {
		return "", invalid("tracking_domain", "must be a host name such as track.example.com.")
	}
	for _, l := range labels {
		if !hostLabel.MatchString(l) {
			return "", invalid("tracking_domain", "must be a host name such as track.example.com.")
		}
	}
	return v, nil
}

func addresses(field string, in []string) ([]string, error) {
	if len(in) > MaxCopies {
		return nil, invalid(field, fmt.Sprintf("takes at most %d addresses.", MaxCopies))
	}
	out := make([]string, 0, len(in))
	for _, raw := range in {
		v, ok := contacts.NormalizeEmail(raw)
		if !ok {
			return nil, invalid(field, fmt.Sprintf("must list email addresses (%q is not one).", raw))
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, nil
}

// windowsJSON is how schedule_windows is stored: [] when empty.
func windowsJSON(w [][]Window) []byte {
	if len(w) == 0 {
		return []byte("[]")
	}
	raw, _ := json.Marshal(w)
	return raw
}

// parseWindows reads stored schedule_windows.
func parseWindows(raw []byte) [][]Window {
	var w [][]Window
	if json.Unmarshal(raw, &w) != nil || len(w) == 0 {
		return nil
	}
	return w
}

// names lists the JSON names of the fields p sends.
func (p Patch) names() []string {
	var out []string
	add := func(set bool, name string) {
		if set {
			out = append(out, name)
		}
	}
	add(p.Name.Set, "name")
	add(p.Description.Set, "description")
	add(p.StopOnReply.Set, "stop_on_reply")
	add(p.OpenTracking.Set, "open_tracking")
	add(p.LinkTracking.Set, "link_tracking")
	add(p.TextOnly.Set, "text_only")
	add(p.UnsubscribeHeader.Set, "unsubscribe_header")
	add(p.RiskyEmails.Set, "risky_emails")
	add(p.DailyLimit.Set, "daily_limit")
	add(p.Cc.Set, "cc")
	add(p.Bcc.Set, "bcc")
	add(p.StartDate.Set, "start_date")
	add(p.EndDate.Set, "end_date")
	add(p.Timezone.Set, "timezone")
	add(p.Days.Set, "days")
	add(p.StartTime.Set, "start_time")
	add(p.EndTime.Set, "end_time")
	add(p.ScheduleWindows.Set, "schedule_windows")
	add(p.ContactOrderBy.Set, "contact_order_by")
	add(p.ContactOrderDir.Set, "contact_order_dir")
	add(p.ContactOrderField.Set, "contact_order_field")
	add(p.SenderStrategy.Set, "sender_strategy")
	add(p.RotationMode.Set, "rotation_mode")
	add(p.RampEnabled.Set, "ramp_enabled")
	add(p.RampStart.Set, "ramp_start")
	add(p.RampIncrement.Set, "ramp_increment")
	add(p.RampCeiling.Set, "ramp_ceiling")
	add(p.EspMatchMode.Set, "esp_match_mode")
	add(p.MaxNewLeadsPerDay.Set, "max_new_leads_per_day")
	add(p.PrioritizeNewLeads.Set, "prioritize_new_leads")
	add(p.EntryDelayMinutes.Set, "entry_delay_minutes")
	add(p.Continuous.Set, "continuous")
	add(p.TrackingDomain.Set, "tracking_domain")
	add(p.UtmTracking.Set, "utm_tracking")
	add(p.UtmSource.Set, "utm_source")
	add(p.UtmMedium.Set, "utm_medium")
	add(p.UtmCampaign.Set, "utm_campaign")
	return out
}
