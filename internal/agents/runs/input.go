package runs

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// Limits of a run's body beyond what the contract fixes: a run is one agent's launch, not an import, so its
// inline leads and contact ids stop at MaxLeads each (larger audiences go through contacts and segments),
// and its steps at the campaign's own limit.
const (
	MaxLeads      = 1000
	MaxContactIDs = 1000
	MaxSteps      = campaign.MaxSteps
	// MaxSenderIDs is the most mailboxes an explicit selection names (a campaign's sender pool limit).
	MaxSenderIDs = 500
	// MaxTagIDs is the most mailbox tags a tag selection names (a campaign's tag limit).
	MaxTagIDs = 50
)

// Intents and sender modes of CreateOutboundRun.
const (
	IntentDraft  = "draft"
	IntentLaunch = "launch"

	SendersAuto     = "auto"
	SendersExplicit = "explicit"
	SendersTag      = "tag"
)

// Step types of a run step (RunStep.type).
const (
	StepEmail        = "email"
	StepAppAction    = "app_action"
	StepWaitForEvent = "wait_for_event"
	StepWait         = "wait"
)

// Input is a run's request as accepted (the contract's CreateOutboundRun, field for field): it is stored as
// the run's input and read back by the jobs that carry the run, so its JSON names are the contract's.
type Input struct {
	CampaignID  uuid.NullUUID `json:"campaign_id"`
	Name        string        `json:"name,omitempty"`
	Description string        `json:"description,omitempty"`
	Senders     Senders       `json:"senders"`
	Leads       []Lead        `json:"leads,omitempty"`
	ContactIDs  []uuid.UUID   `json:"contact_ids,omitempty"`
	SegmentIDs  []uuid.UUID   `json:"segment_ids,omitempty"`
	Steps       []Step        `json:"steps,omitempty"`
	DailyLimit  int           `json:"daily_limit"`
	Schedule    Schedule      `json:"schedule"`
	StopOnReply bool          `json:"stop_on_reply"`
	OptOut      bool          `json:"opt_out_enabled"`
	Intent      string        `json:"intent"`
}

// MarshalJSON leaves campaign_id out when the run creates its campaign, as the request did.
func (in Input) MarshalJSON() ([]byte, error) {
	type plain Input
	out := struct {
		plain
		CampaignID *uuid.UUID `json:"campaign_id,omitempty"`
	}{plain: plain(in)}
	if in.CampaignID.Valid {
		out.CampaignID = &in.CampaignID.UUID
	}
	return json.Marshal(out)
}

// Senders is how the run picks the mailboxes it sends from.
type Senders struct {
	Mode       string      `json:"mode"`
	MailboxIDs []uuid.UUID `json:"mailbox_ids,omitempty"`
	TagIDs     []uuid.UUID `json:"tag_ids,omitempty"`
}

// Lead is one inline lead: a contact the run creates or enriches, by address.
type Lead struct {
	Email        string            `json:"email"`
	FirstName    string            `json:"first_name,omitempty"`
	LastName     string            `json:"last_name,omitempty"`
	Company      string            `json:"company,omitempty"`
	Phone        string            `json:"phone,omitempty"`
	CustomFields map[string]string `json:"custom_fields,omitempty"`
}

// Step is one step of the run's sequence: an email with its variants, an app action, a wait for a product
// event or a plain wait.
type Step struct {
	Name         string        `json:"name,omitempty"`
	WaitAfter    *int          `json:"wait_after,omitempty"`
	Variants     []Variant     `json:"variants,omitempty"`
	Type         string        `json:"type,omitempty"`
	AppAction    *AppAction    `json:"app_action,omitempty"`
	WaitForEvent *WaitForEvent `json:"wait_for_event,omitempty"`
	Wait         *Wait         `json:"wait,omitempty"`
}

// Variant is one version of an email step's message; the first is the step's own content.
type Variant struct {
	Subject   string `json:"subject"`
	BodyPlain string `json:"body_plain,omitempty"`
	BodyHTML  string `json:"body_html,omitempty"`
	Weight    *int   `json:"weight,omitempty"`
}

// AppAction calls an app connection (named by id or by name) at path and keeps the answer as .App.<output_key>.
type AppAction struct {
	Connection string          `json:"connection"`
	Path       string          `json:"path"`
	OutputKey  string          `json:"output_key"`
	Inputs     json.RawMessage `json:"inputs,omitempty"`
}

// WaitForEvent holds the lead until the contact raises a product event, at most TimeoutMinutes.
type WaitForEvent struct {
	Event          string `json:"event"`
	TimeoutMinutes *int   `json:"timeout_minutes,omitempty"`
	OnTimeout      string `json:"on_timeout,omitempty"`
}

// Wait holds the lead for Minutes.
type Wait struct {
	Minutes int `json:"minutes"`
}

// Schedule is when the campaign sends: auto keeps the campaign's defaults (weekdays 09:00 to 17:00) in
// Timezone; explicit sets the days and the times.
type Schedule struct {
	Mode      string `json:"mode"`
	Timezone  string `json:"timezone,omitempty"`
	Days      *int   `json:"days,omitempty"`
	StartTime string `json:"start_time,omitempty"`
	EndTime   string `json:"end_time,omitempty"`
}

// stepType is a step's type, email when the request left it out (the contract's default).
func (s Step) stepType() string {
	if s.Type == "" {
		return StepEmail
	}
	return s.Type
}

// bad refuses a field: the code names the body field the rule belongs to (invalid_steps for any step's
// field, so clients branch on a stable code) and the message the exact path and the rule.
func bad(field, rule string) error {
	top, _, _ := strings.Cut(field, ".")
	top, _, _ = strings.Cut(top, "[")
	return apierror.BadRequest("invalid_"+top, field+" "+rule)
}

// Validate checks a run's body as a whole before anything is stored, so a run never fails later on what its
// request alone shows: every rule names its field. References to the organization's records (mailboxes,
// tags, contacts, segments, app connections, the campaign) are checked against the database by Create.
func Validate(in Input, now time.Time) error {
	if in.Intent != IntentDraft && in.Intent != IntentLaunch {
		return bad("intent", "must be draft or launch.")
	}
	if err := validateSenders(in.Senders); err != nil {
		return err
	}
	if err := validateAudience(in); err != nil {
		return err
	}
	switch {
	case in.CampaignID.Valid && len(in.Steps) > 0:
		return bad("steps", "must be left out with campaign_id: the run sends that campaign's own steps.")
	case !in.CampaignID.Valid && len(in.Steps) == 0:
		return bad("steps", "must hold at least one step when the run creates its campaign (no campaign_id).")
	case len(in.Steps) > MaxSteps:
		return bad("steps", fmt.Sprintf("takes at most %d steps.", MaxSteps))
	}
	steps, variants, err := campaignSteps(in.Steps, func(string) (uuid.UUID, error) { return uuid.Nil, nil })
	if err != nil {
		return err
	}
	if _, err := campaign.BuildSteps(steps, campaign.KindSequence); err != nil {
		return err
	}
	for i, v := range variants {
		if w := v.Weight.Value; w < 0 || w > campaign.MaxVariantWeight {
			return bad(fmt.Sprintf("steps[%d].variants.weight", v.StepPosition.Value), fmt.Sprintf("must be 0 to %d (variant %d).", campaign.MaxVariantWeight, i+1))
		}
	}
	patch, err := settingsPatch(in)
	if err != nil {
		return err
	}
	// The run's own fields are checked as the campaign would take them; a named campaign keeps its name.
	base := campaign.Defaults()
	base.Name = "Agent run"
	_, err = campaign.Normalize(patch.Apply(base), campaign.Check{Now: now})
	return err
}

func validateSenders(s Senders) error {
	switch s.Mode {
	case SendersAuto:
		if len(s.MailboxIDs) > 0 || len(s.TagIDs) > 0 {
			return bad("senders", "mode auto picks the mailboxes itself: leave mailbox_ids and tag_ids out.")
		}
	case SendersExplicit:
		if len(s.MailboxIDs) == 0 || len(s.MailboxIDs) > MaxSenderIDs {
			return bad("senders.mailbox_ids", fmt.Sprintf("must list 1 to %d mailboxes with mode explicit.", MaxSenderIDs))
		}
		if len(s.TagIDs) > 0 {
			return bad("senders.tag_ids", "is for mode tag; mode explicit sends from mailbox_ids.")
		}
		if dup := firstRepeat(s.MailboxIDs); dup >= 0 {
			return bad("senders.mailbox_ids", fmt.Sprintf("lists mailbox %s twice.", s.MailboxIDs[dup]))
		}
	case SendersTag:
		if len(s.TagIDs) == 0 || len(s.TagIDs) > MaxTagIDs {
			return bad("senders.tag_ids", fmt.Sprintf("must list 1 to %d mailbox tags with mode tag.", MaxTagIDs))
		}
		if len(s.MailboxIDs) > 0 {
			return bad("senders.mailbox_ids", "is for mode explicit; mode tag sends from the mailboxes carrying tag_ids.")
		}
	default:
		return bad("senders.mode", "must be auto, explicit or tag.")
	}
	return nil
}

func validateAudience(in Input) error {
	if len(in.Leads) > MaxLeads {
		return bad("leads", fmt.Sprintf("takes at most %d leads per run; add larger audiences as contacts or a segment and name them in contact_ids or segment_ids.", MaxLeads))
	}
	if len(in.ContactIDs) > MaxContactIDs {
		return bad("contact_ids", fmt.Sprintf("takes at most %d contacts per run; name larger audiences by segment_ids.", MaxContactIDs))
	}
	if len(in.SegmentIDs) > campaign.MaxSegments {
		return bad("segment_ids", fmt.Sprintf("takes at most %d segments.", campaign.MaxSegments))
	}
	if !in.CampaignID.Valid && len(in.Leads) == 0 && len(in.ContactIDs) == 0 && len(in.SegmentIDs) == 0 {
		return bad("leads", "contact_ids or segment_ids must name the run's recipients when the run creates its campaign.")
	}
	for i, l := range in.Leads {
		at := func(field string) string { return fmt.Sprintf("leads[%d].%s", i, field) }
		if _, ok := contacts.NormalizeEmail(l.Email); !ok {
			return bad(at("email"), fmt.Sprintf("must be an email address (%q is not one).", truncate.Chars(l.Email, 100)))
		}
		for _, f := range []struct {
			name, v string
			max     int
		}{{"first_name", l.FirstName, contacts.MaxNameLen}, {"last_name", l.LastName, contacts.MaxNameLen},
			{"company", l.Company, contacts.MaxNameLen}, {"phone", l.Phone, contacts.MaxPhoneLen}} {
			if len([]rune(strings.TrimSpace(f.v))) > f.max {
				return bad(at(f.name), fmt.Sprintf("must be at most %d characters.", f.max))
			}
		}
		if err := contacts.CheckCustomFields(l.CustomFields); err != nil {
			return bad(at("custom_fields"), "breaks a rule: "+apierror.From(err).Message)
		}
	}
	return nil
}

// firstRepeat is the index of the first id that appeared before it in ids, or -1.
func firstRepeat(ids []uuid.UUID) int {
	for i := range ids {
		if slices.Contains(ids[:i], ids[i]) {
			return i
		}
	}
	return -1
}

// settingsPatch is what the run sets on its campaign: name and description when given, the daily limit,
// the schedule (explicit days and times, or the defaults in the timezone for auto), stop_on_reply, the
// one-click opt-out header, and the explicit sender strategy (a run sends from its frozen senders only).
func settingsPatch(in Input) (campaign.Patch, error) {
	p := campaign.Patch{DailyLimit: campaign.Of(int32(min(in.DailyLimit, 1<<30))), StopOnReply: campaign.Of(in.StopOnReply),
		UnsubscribeHeader: campaign.Of(in.OptOut), SenderStrategy: campaign.Of(campaign.StrategyExplicit)}
	if name := strings.TrimSpace(in.Name); name != "" {
		p.Name = campaign.Of(name)
	} else if !in.CampaignID.Valid {
		p.Name = campaign.Of("Agent run")
	}
	if in.Description != "" {
		p.Description = campaign.Of(in.Description)
	}
	s := in.Schedule
	if s.Timezone != "" {
		p.Timezone = campaign.Of(s.Timezone)
	} else if !in.CampaignID.Valid {
		p.Timezone = campaign.Of("UTC")
	}
	switch s.Mode {
	case "auto":
		if s.Days != nil || s.StartTime != "" || s.EndTime != "" {
			return p, bad("schedule", "mode auto keeps the campaign's sending days and hours: leave days, start_time and end_time out, or use mode explicit.")
		}
	case "explicit":
		if s.StartTime == "" || s.EndTime == "" {
			return p, bad("schedule", "mode explicit needs start_time and end_time (HH:MM).")
		}
		p.StartTime, p.EndTime = campaign.Of(s.StartTime), campaign.Of(s.EndTime)
		if s.Days != nil {
			if *s.Days < 0 || *s.Days > 127 {
				return p, bad("schedule.days", "must be a weekday bitmask from 0 to 127 (bit 0 = Monday).")
			}
			p.Days = campaign.Of(int16(*s.Days))
		}
	default:
		return p, bad("schedule.mode", "must be auto or explicit.")
	}
	return p, nil
}

// campaignSteps maps the run's steps onto the campaign's step inputs and, for email steps with more than one
// variant, A/B variants of that step: the first variant is the step's own content (its control), each other
// one a variant with its own content. resolve turns an app_action's connection (an id or a name) into the
// connection's id.
func campaignSteps(in []Step, resolve func(connection string) (uuid.UUID, error)) ([]campaign.StepInput, []campaign.VariantInput, error) {
	steps := make([]campaign.StepInput, len(in))
	var variants []campaign.VariantInput
	for i, s := range in {
		at := func(field string) string { return fmt.Sprintf("steps[%d].%s", i, field) }
		st := campaign.StepInput{Name: campaign.Of(s.Name)}
		if s.WaitAfter != nil {
			st.WaitAfter = campaign.Of(int32(min(*s.WaitAfter, 1<<30)))
		}
		configs := 0
		for _, set := range []bool{s.AppAction != nil, s.WaitForEvent != nil, s.Wait != nil} {
			if set {
				configs++
			}
		}
		if s.stepType() != StepEmail && len(s.Variants) > 0 {
			return nil, nil, bad(at("variants"), "are for email steps only.")
		}
		if configs > 1 || configs == 1 && s.stepType() == StepEmail {
			return nil, nil, bad(at("type"), "must match the one config the step carries (app_action, wait_for_event or wait).")
		}
		var action map[string]any
		switch s.stepType() {
		case StepEmail:
			if len(s.Variants) == 0 {
				return nil, nil, bad(at("variants"), "must hold at least one variant (the email's subject and body).")
			}
			v := s.Variants[0]
			st.Subject, st.BodyPlain, st.BodyHTML = campaign.Of(v.Subject), campaign.Of(v.BodyPlain), campaign.Of(v.BodyHTML)
			if len(s.Variants) > 1 {
				variants = append(variants, stepVariants(i, s.Variants)...)
			}
		case StepWait:
			if s.Wait == nil {
				return nil, nil, bad(at("wait"), "is required for a wait step ({minutes}).")
			}
			st.Kind = campaign.Of(campaign.StepWait)
			action = map[string]any{"wait_minutes": s.Wait.Minutes}
		case StepWaitForEvent:
			w := s.WaitForEvent
			if w == nil {
				return nil, nil, bad(at("wait_for_event"), "is required for a wait_for_event step ({event, timeout_minutes, on_timeout}).")
			}
			timeout := campaign.MaxEventTimeout
			if w.TimeoutMinutes != nil && *w.TimeoutMinutes != 0 {
				timeout = *w.TimeoutMinutes
			}
			st.Kind = campaign.Of(campaign.StepAction)
			action = map[string]any{"type": campaign.ActionForEvent, "wait_event_name": w.Event, "timeout_minutes": timeout}
			if w.OnTimeout != "" {
				st.OnTimeout = campaign.Of(w.OnTimeout)
			}
		case StepAppAction:
			a := s.AppAction
			if a == nil {
				return nil, nil, bad(at("app_action"), "is required for an app_action step ({connection, path, output_key, inputs}).")
			}
			id, err := resolve(a.Connection)
			if err != nil {
				return nil, nil, err
			}
			st.Kind = campaign.Of(campaign.StepAction)
			action = map[string]any{"type": campaign.ActionApp, "app_connection_id": id, "path": a.Path, "output_key": a.OutputKey}
			if len(a.Inputs) > 0 {
				action["inputs"] = a.Inputs
			}
		default:
			return nil, nil, bad(at("type"), "must be email, app_action, wait_for_event or wait.")
		}
		if action != nil {
			raw, err := json.Marshal(action)
			if err != nil {
				return nil, nil, err
			}
			st.Action = campaign.Of(json.RawMessage(raw))
		}
		steps[i] = st
	}
	return steps, variants, nil
}

// stepVariants are the A/B variants of email step pos: the first is the control (the step's own content), the
// others carry theirs; each weighs its weight, or the default.
func stepVariants(pos int, vs []Variant) []campaign.VariantInput {
	out := make([]campaign.VariantInput, len(vs))
	for j, v := range vs {
		weight := int32(campaign.DefaultVariantWeight)
		if v.Weight != nil {
			weight = int32(max(min(*v.Weight, 1<<30), -1<<30))
		}
		in := campaign.VariantInput{Name: campaign.Of(fmt.Sprintf("Variant %d", j+1)), StepPosition: campaign.Of(int32(pos)),
			Weight: campaign.Of(weight), IsControl: campaign.Of(j == 0), IsActive: campaign.Of(true)}
		if j > 0 {
			in.Subject, in.BodyPlain, in.BodyHTML = campaign.Of(v.Subject), campaign.Of(v.BodyPlain), campaign.Of(v.BodyHTML)
		}
		out[j] = in
	}
	return out
}
