package engine

import (
	"encoding/binary"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/schedule"
)

// RampAllowance is how many sends the ramp allows on a day at level (0 on the first sending day): ramp_start
// plus level increments, never above ramp_ceiling.
func RampAllowance(start, increment, ceiling, level int32) int32 {
	v := int64(start) + int64(level)*int64(increment)
	return int32(min(v, int64(ceiling)))
}

// RampLevelOn is the ramp level on the sending day day, given the level the campaign stored and the last day
// it sent on (rampDay, nil before its first): the level advances by one on each new sending day.
func RampLevelOn(level int32, rampDay *time.Time, day time.Time) int32 {
	if rampDay == nil || !day.After(*rampDay) {
		return level
	}
	return level + 1
}

// Allowance is how many sends the campaign may make on a day at ramp level level: daily_limit, lowered by the
// ramp when it is on. byRamp reports that the ramp, not daily_limit, is the bound.
func Allowance(c campaign.Settings, level int32) (n int32, byRamp bool) {
	if !c.RampEnabled {
		return c.DailyLimit, false
	}
	r := RampAllowance(c.RampStart, c.RampIncrement, c.RampCeiling, level)
	if r < c.DailyLimit {
		return r, true
	}
	return c.DailyLimit, false
}

// WeekOf is when the campaign may send: its schedule_windows, or the legacy days, start_time and end_time when
// it has none.
func WeekOf(s campaign.Settings) schedule.Week {
	var w schedule.Week
	if len(s.ScheduleWindows) > 0 {
		for d, spans := range s.ScheduleWindows {
			if d > 6 {
				break
			}
			for _, sp := range spans {
				w[d] = append(w[d], schedule.Span{Start: sp.Start, End: sp.End})
			}
		}
		return w
	}
	return schedule.LegacyWeek(schedule.Weekdays(s.Days), clockMinutes(s.StartTime), clockMinutes(s.EndTime))
}

// clockMinutes is an HH:MM time as minutes of the day (stored values are checked; anything else is 0).
func clockMinutes(hhmm string) int {
	h, m, ok := strings.Cut(hhmm, ":")
	if !ok {
		return 0
	}
	hi, err1 := strconv.Atoi(h)
	mi, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil {
		return 0
	}
	return hi*60 + mi
}

// pick is a deterministic draw in [0, n) for a contact at a step: the same contact and step always draw the
// same value, so a re-planned lead keeps its variant and its weighted sender.
func pick(contact, step uuid.UUID, salt string, n uint64) uint64 {
	if n == 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write(contact[:])
	_, _ = h.Write(step[:])
	_, _ = h.Write([]byte(salt))
	return h.Sum64() % n
}

// Variant is an A/B variant as the choice sees it.
type Variant struct {
	ID       uuid.UUID
	Weight   int32
	Promoted bool
}

// ChooseVariant picks a contact's variant of a step among vs: the promoted one when the A/B decision promoted
// one, otherwise a deterministic draw by weight (a variant of weight 0 is never drawn). ok is false when none
// can be drawn (no variants, or every weight is 0): the step's own content is sent.
func ChooseVariant(vs []Variant, contact, step uuid.UUID) (int, bool) {
	var total uint64
	for i, v := range vs {
		if v.Promoted {
			return i, true
		}
		total += uint64(max(v.Weight, 0))
	}
	if total == 0 {
		return 0, false
	}
	draw := pick(contact, step, "variant", total)
	for i, v := range vs {
		w := uint64(max(v.Weight, 0))
		if draw < w {
			return i, true
		}
		draw -= w
	}
	return 0, false
}

// ESP families a contact's esp_provider and a mailbox's provider are matched by.
const (
	espGoogle    = "google"
	espMicrosoft = "microsoft"
	espOther     = "other"
)

// ContactESP is the family of a contact's esp_provider ("" when unknown).
func ContactESP(provider string) string {
	p := strings.ToLower(strings.TrimSpace(provider))
	switch {
	case p == "" || p == "unknown":
		return ""
	case strings.Contains(p, "google") || strings.Contains(p, "gmail"):
		return espGoogle
	case strings.Contains(p, "microsoft") || strings.Contains(p, "outlook") || strings.Contains(p, "office365") ||
		strings.Contains(p, "office 365") || strings.Contains(p, "hotmail") || strings.Contains(p, "exchange") || p == "live" || strings.HasPrefix(p, "live."):
		return espMicrosoft
	}
	return espOther
}

// AddressESP is the family of a consumer mailbox address by its domain (gmail.com, outlook.com, hotmail.*,
// live.*, msn.com; "" for any other domain): what ESP matching reads for a contact whose esp_provider is
// unknown. A company domain hosted by either provider is known only by its esp_provider.
func AddressESP(email string) string {
	_, domain, _ := strings.Cut(strings.ToLower(email), "@")
	switch {
	case domain == "gmail.com" || domain == "googlemail.com":
		return espGoogle
	case domain == "outlook.com" || domain == "msn.com" || strings.HasPrefix(domain, "hotmail.") ||
		strings.HasPrefix(domain, "live.") || strings.HasPrefix(domain, "outlook."):
		return espMicrosoft
	}
	return ""
}

// MailboxESP is the family of a mailbox provider (gmail, outlook, smtp_imap).
func MailboxESP(provider string) string {
	switch provider {
	case "gmail":
		return espGoogle
	case "outlook":
		return espMicrosoft
	}
	return espOther
}

// Sender is one pool mailbox as the sender choice sees it, with what it has left.
type Sender struct {
	ID       uuid.UUID
	Weight   int32
	ESP      string
	Cap      int32 // its daily campaign_limit
	Used     int32 // capped sends charged or planned on its current day
	Gap      time.Duration
	Slot     time.Time // the earliest start of its next capped send by its gap
	DayEnds  time.Time // when its current (mailbox-local) day ends and Used starts again from 0
	Disabled bool      // its domain is past the authentication grace period: it sends no campaign mail
}

// free reports whether s can start a capped send at now.
func (s Sender) free(now time.Time) bool {
	return !s.Disabled && s.Used < s.Cap && !s.Slot.After(now)
}

// Choice asks for a sender for one send.
type Choice struct {
	Mode    string // round_robin, weighted, least_used
	Cursor  uint64 // round-robin position
	ESP     string // the contact's ESP family ("" unknown)
	ESPMode string // off, prefer, strict
	Contact uuid.UUID
	Step    uuid.UUID
	// Only, when set, is the one mailbox the send may go from (a thread's follow-up).
	Only uuid.NullUUID
}

// Wait reasons a lead shows while nothing can be sent to it yet (the lead hold and logs carry them).
const (
	ReasonOutsideWindow = "outside the sending window"
	ReasonNotStarted    = "the campaign's start date has not come"
	ReasonCampaignLimit = "the campaign's daily limit is reached"
	ReasonRamp          = "the campaign's ramp-up limit for today is reached"
	ReasonNewLeadQuota  = "the campaign's new-lead quota for today is reached"
	ReasonMailboxCap    = "every sending mailbox has reached its daily cap"
	ReasonGap           = "waiting for a sending mailbox's minimum gap between sends"
	ReasonEntryDelay    = "waiting for the campaign's entry delay"
	ReasonHeld          = "held"
	ReasonNoSender      = "no sending mailbox is available"
	ReasonESP           = "no sending mailbox matches the contact's email provider (esp_match_mode strict)"
	ReasonWaitStep      = "waiting for a wait step"
	ReasonFollowUp      = "waiting for the next step's delay"
	ReasonRetry         = "retrying after a failed send"
	ReasonThreadSender  = "waiting for the mailbox that started the conversation"
	ReasonContactHours  = "waiting for the contact's preferred hours"
	ReasonConditionSkip = "a step's condition did not match, so it was skipped; waiting for the next step's delay"
	ReasonConditionStop = "a step's condition did not match and ends the sequence there"
)

// ChooseSender picks the sender of one send among pool (in mailbox order) at now. When none is free it answers
// why not and when the earliest one will be (retry); ok false with a zero retry means none ever will be under
// the current pool (empty, or none matches a strict ESP rule).
func ChooseSender(pool []Sender, c Choice, now time.Time) (idx int, ok bool, reason string, retry time.Time) {
	candidates := make([]int, 0, len(pool))
	for i, s := range pool {
		if s.Disabled || c.Only.Valid && s.ID != c.Only.UUID {
			continue
		}
		candidates = append(candidates, i)
	}
	if len(candidates) == 0 {
		if c.Only.Valid {
			return 0, false, ReasonThreadSender, time.Time{}
		}
		return 0, false, ReasonNoSender, time.Time{}
	}
	if c.ESP != "" && c.ESPMode != "off" && c.ESPMode != "" {
		var match []int
		for _, i := range candidates {
			if pool[i].ESP == c.ESP {
				match = append(match, i)
			}
		}
		switch {
		case c.ESPMode == "strict" && len(match) == 0:
			return 0, false, ReasonESP, time.Time{}
		case c.ESPMode == "strict":
			candidates = match
		case len(match) > 0 && anyFree(pool, match, now):
			candidates = match // prefer: a matching mailbox when one can send now
		}
	}
	var free []int
	for _, i := range candidates {
		if pool[i].free(now) {
			free = append(free, i)
		}
	}
	if len(free) == 0 {
		reason, retry = whyNot(pool, candidates, now)
		return 0, false, reason, retry
	}
	switch c.Mode {
	case "weighted":
		var total uint64
		for _, i := range free {
			total += uint64(max(pool[i].Weight, 1))
		}
		draw := pick(c.Contact, c.Step, "sender"+strconv.FormatUint(c.Cursor, 10), total)
		for _, i := range free {
			w := uint64(max(pool[i].Weight, 1))
			if draw < w {
				return i, true, "", time.Time{}
			}
			draw -= w
		}
	case "least_used":
		best := free[0]
		for _, i := range free[1:] {
			if pool[i].Used < pool[best].Used {
				best = i
			}
		}
		return best, true, "", time.Time{}
	}
	// round_robin: the first free mailbox at or after the cursor's place in the pool.
	start := int(c.Cursor % uint64(len(pool)))
	for k := range len(pool) {
		i := (start + k) % len(pool)
		for _, f := range free {
			if f == i {
				return i, true, "", time.Time{}
			}
		}
	}
	return free[0], true, "", time.Time{}
}

func anyFree(pool []Sender, idx []int, now time.Time) bool {
	for _, i := range idx {
		if pool[i].free(now) {
			return true
		}
	}
	return false
}

// whyNot explains why none of the candidates can send at now and when the earliest can: a gap ends, or a full
// mailbox's day turns.
func whyNot(pool []Sender, candidates []int, now time.Time) (string, time.Time) {
	var gapAt, dayAt time.Time
	for _, i := range candidates {
		s := pool[i]
		if s.Used >= s.Cap {
			if dayAt.IsZero() || s.DayEnds.Before(dayAt) {
				dayAt = s.DayEnds
			}
			continue
		}
		if gapAt.IsZero() || s.Slot.Before(gapAt) {
			gapAt = s.Slot
		}
	}
	if !gapAt.IsZero() && (dayAt.IsZero() || !dayAt.Before(gapAt)) {
		return ReasonGap, gapAt
	}
	return ReasonMailboxCap, dayAt
}

// ContactSlot is send-time optimisation for one contact: the earliest instant at or after t that falls in one
// of hours (hours of the day in the contact's zone loc; empty means any hour) and, on the contact's Saturday or
// Sunday, passes the weekend draw: with weekendWeight below 1, only that share of contacts (a deterministic
// draw per contact and date) is sent to on a weekend day, the rest wait for a weekday. ok is false when no such
// instant comes within eight days.
func ContactSlot(t time.Time, loc *time.Location, hours []int, weekendWeight float64, contact uuid.UUID) (time.Time, bool) {
	allowed := [24]bool{}
	for _, h := range hours {
		if h >= 0 && h < 24 {
			allowed[h] = true
		}
	}
	anyHour := len(hours) == 0
	at := t
	for range 8 * 24 {
		local := at.In(loc)
		weekend := local.Weekday() == time.Saturday || local.Weekday() == time.Sunday
		dayOK := !weekend || weekendWeight >= 1 || weekendDraw(contact, local) < weekendWeight
		if dayOK && (anyHour || allowed[local.Hour()]) {
			return at, true
		}
		// The next whole hour of the contact's clock, stepped in absolute time so a repeated hour is not skipped.
		next := at.Add(time.Duration(60-local.Minute())*time.Minute - time.Duration(local.Second())*time.Second -
			time.Duration(local.Nanosecond()))
		at = next
	}
	return time.Time{}, false
}

// weekendDraw is a contact's draw in [0, 1) for the civil date of local.
func weekendDraw(contact uuid.UUID, local time.Time) float64 {
	y, m, d := local.Date()
	day := uuid.UUID{}
	binary.BigEndian.PutUint64(day[:8], uint64(y*10000+int(m)*100+d))
	return float64(pick(contact, day, "weekend", 1<<20)) / float64(1<<20)
}
