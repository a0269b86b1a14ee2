package handlers

import (
	"time"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
)

// optField maps an optional API value to a campaign input field.
func optField[T, V any](v T, ok bool, conv func(T) V) campaign.Field[V] {
	if !ok {
		return campaign.Field[V]{}
	}
	return campaign.Of(conv(v))
}

func same[T any](v T) T              { return v }
func int32Of(v int) int32            { return int32(v) }
func int16Of(v int) int16            { return int16(v) }
func stringOf[T ~string](v T) string { return string(v) }

// nilTime maps an optional, nullable timestamp: absent is unset, null clears.
func nilTime(v api.OptNilDateTime) campaign.Field[*time.Time] {
	if !v.Set {
		return campaign.Field[*time.Time]{}
	}
	if v.Null {
		return campaign.Of[*time.Time](nil)
	}
	t := v.Value
	return campaign.Of(&t)
}

// sentSlice maps an array that is absent (nil) or sent (an empty one included).
func sentSlice[T any](v []T) campaign.Field[[]T] {
	if v == nil {
		return campaign.Field[[]T]{}
	}
	return campaign.Of(v)
}

// windowsOf maps schedule_windows; a window missing start or end gets -1, which validation refuses by name.
func windowsOf(w api.ScheduleWindows) campaign.Field[[][]campaign.Window] {
	if w == nil {
		return campaign.Field[[][]campaign.Window]{}
	}
	out := make([][]campaign.Window, len(w))
	for i, day := range w {
		out[i] = make([]campaign.Window, len(day))
		for j, x := range day {
			out[i][j] = campaign.Window{Start: x.Start.Or(-1), End: x.End.Or(-1)}
		}
	}
	return campaign.Of(out)
}

func windowsAPI(w [][]campaign.Window) api.ScheduleWindows {
	out := make(api.ScheduleWindows, len(w))
	for i, day := range w {
		out[i] = make([]api.ScheduleWindowsItemItem, len(day))
		for j, x := range day {
			out[i][j] = api.ScheduleWindowsItemItem{Start: api.NewOptInt(x.Start), End: api.NewOptInt(x.End)}
		}
	}
	return out
}

func sendersOf(in []api.CampaignSenderInput) []campaign.SenderInput {
	out := make([]campaign.SenderInput, len(in))
	for i, s := range in {
		out[i] = campaign.SenderInput{MailboxID: s.EmailAccountID,
			Weight:  optField(s.Weight.Value, s.Weight.Set, int32Of),
			Enabled: optField(s.Enabled.Value, s.Enabled.Set, same[bool])}
	}
	return out
}

// createPatchOf maps POST /campaigns's settings.
func createPatchOf(r *api.CampaignCreate) campaign.Patch {
	return campaign.Patch{
		Name:               campaign.Of(r.Name),
		Description:        optField(r.Description.Value, r.Description.Set, same[string]),
		Kind:               optField(r.Kind.Value, r.Kind.Set, stringOf[api.CampaignCreateKind]),
		StopOnReply:        optField(r.StopOnReply.Value, r.StopOnReply.Set, same[bool]),
		OpenTracking:       optField(r.OpenTracking.Value, r.OpenTracking.Set, same[bool]),
		LinkTracking:       optField(r.LinkTracking.Value, r.LinkTracking.Set, same[bool]),
		TextOnly:           optField(r.TextOnly.Value, r.TextOnly.Set, same[bool]),
		UnsubscribeHeader:  optField(r.UnsubscribeHeader.Value, r.UnsubscribeHeader.Set, same[bool]),
		RiskyEmails:        optField(r.RiskyEmails.Value, r.RiskyEmails.Set, same[bool]),
		DailyLimit:         optField(r.DailyLimit.Value, r.DailyLimit.Set, int32Of),
		Cc:                 sentSlice(r.Cc),
		Bcc:                sentSlice(r.Bcc),
		StartDate:          nilTime(r.StartDate),
		EndDate:            nilTime(r.EndDate),
		Timezone:           optField(r.Timezone.Value, r.Timezone.Set, same[string]),
		Days:               optField(r.Days.Value, r.Days.Set, int16Of),
		StartTime:          optField(r.StartTime.Value, r.StartTime.Set, same[string]),
		EndTime:            optField(r.EndTime.Value, r.EndTime.Set, same[string]),
		ScheduleWindows:    windowsOf(r.ScheduleWindows),
		ContactOrderBy:     optField(r.ContactOrderBy.Value, r.ContactOrderBy.Set, same[string]),
		ContactOrderDir:    optField(r.ContactOrderDir.Value, r.ContactOrderDir.Set, stringOf[api.CampaignCreateContactOrderDir]),
		SenderStrategy:     optField(r.SenderStrategy.Value, r.SenderStrategy.Set, stringOf[api.CampaignCreateSenderStrategy]),
		RotationMode:       optField(r.RotationMode.Value, r.RotationMode.Set, stringOf[api.CampaignCreateRotationMode]),
		RampEnabled:        optField(r.RampEnabled.Value, r.RampEnabled.Set, same[bool]),
		RampStart:          optField(r.RampStart.Value, r.RampStart.Set, int32Of),
		RampIncrement:      optField(r.RampIncrement.Value, r.RampIncrement.Set, int32Of),
		RampCeiling:        optField(r.RampCeiling.Value, r.RampCeiling.Set, int32Of),
		EspMatchMode:       optField(r.EspMatchMode.Value, r.EspMatchMode.Set, stringOf[api.CampaignCreateEspMatchMode]),
		MaxNewLeadsPerDay:  optField(r.MaxNewLeadsPerDay.Value, r.MaxNewLeadsPerDay.Set, int32Of),
		PrioritizeNewLeads: optField(r.PrioritizeNewLeads.Value, r.PrioritizeNewLeads.Set, same[bool]),
		EntryDelayMinutes:  optField(r.EntryDelayMinutes.Value, r.EntryDelayMinutes.Set, int32Of),
		Continuous:         optField(r.Continuous.Value, r.Continuous.Set, same[bool]),
		TrackingDomain:     optField(r.TrackingDomain.Value, r.TrackingDomain.Set, same[string]),
		UtmTracking:        optField(r.UtmTracking.Value, r.UtmTracking.Set, same[bool]),
		UtmSource:          optField(r.UtmSource.Value, r.UtmSource.Set, same[string]),
		UtmMedium:          optField(r.UtmMedium.Value, r.UtmMedium.Set, same[string]),
		UtmCampaign:        optField(r.UtmCampaign.Value, r.UtmCampaign.Set, same[string]),
	}
}

// updateInputOf maps PATCH /campaigns/:id.
func updateInputOf(r *api.CampaignUpdate) campaign.UpdateInput {
	var orderField campaign.Field[*string]
	if v, ok := r.ContactOrderField.Get(); ok {
		orderField = campaign.Of(&v)
	}
	return campaign.UpdateInput{
		Status:    optField(r.Status.Value, r.Status.Set, stringOf[api.CampaignStatus]),
		EmailTags: sentSlice(r.EmailTags),
		Folders:   sentSlice(r.Folders),
		Segments:  sentSlice(r.SegmentIds),
		Patch: campaign.Patch{
			Name:               optField(r.Name.Value, r.Name.Set, same[string]),
			Description:        optField(r.Description.Value, r.Description.Set, same[string]),
			StopOnReply:        optField(r.StopOnReply.Value, r.StopOnReply.Set, same[bool]),
			OpenTracking:       optField(r.OpenTracking.Value, r.OpenTracking.Set, same[bool]),
			LinkTracking:       optField(r.LinkTracking.Value, r.LinkTracking.Set, same[bool]),
			TextOnly:           optField(r.TextOnly.Value, r.TextOnly.Set, same[bool]),
			UnsubscribeHeader:  optField(r.UnsubscribeHeader.Value, r.UnsubscribeHeader.Set, same[bool]),
			RiskyEmails:        optField(r.RiskyEmails.Value, r.RiskyEmails.Set, same[bool]),
			DailyLimit:         optField(r.DailyLimit.Value, r.DailyLimit.Set, int32Of),
			Cc:                 sentSlice(r.Cc),
			Bcc:                sentSlice(r.Bcc),
			StartDate:          nilTime(r.StartDate),
			EndDate:            nilTime(r.EndDate),
			Timezone:           optField(r.Timezone.Value, r.Timezone.Set, same[string]),
			Days:               optField(r.Days.Value, r.Days.Set, int16Of),
			StartTime:          optField(r.StartTime.Value, r.StartTime.Set, same[string]),
			EndTime:            optField(r.EndTime.Value, r.EndTime.Set, same[string]),
			ScheduleWindows:    windowsOf(r.ScheduleWindows),
			ContactOrderBy:     optField(r.ContactOrderBy.Value, r.ContactOrderBy.Set, same[string]),
			ContactOrderDir:    optField(r.ContactOrderDir.Value, r.ContactOrderDir.Set, stringOf[api.CampaignUpdateContactOrderDir]),
			ContactOrderField:  orderField,
			SenderStrategy:     optField(r.SenderStrategy.Value, r.SenderStrategy.Set, stringOf[api.CampaignUpdateSenderStrategy]),
			RotationMode:       optField(r.RotationMode.Value, r.RotationMode.Set, stringOf[api.CampaignUpdateRotationMode]),
			RampEnabled:        optField(r.RampEnabled.Value, r.RampEnabled.Set, same[bool]),
			RampStart:          optField(r.RampStart.Value, r.RampStart.Set, int32Of),
			RampIncrement:      optField(r.RampIncrement.Value, r.RampIncrement.Set, int32Of),
			RampCeiling:        optField(r.RampCeiling.Value, r.RampCeiling.Set, int32Of),
			EspMatchMode:       optField(r.EspMatchMode.Value, r.EspMatchMode.Set, stringOf[api.CampaignUpdateEspMatchMode]),
			MaxNewLeadsPerDay:  optField(r.MaxNewLeadsPerDay.Value, r.MaxNewLeadsPerDay.Set, int32Of),
			PrioritizeNewLeads: optField(r.PrioritizeNewLeads.Value, r.PrioritizeNewLeads.Set, same[bool]),
			EntryDelayMinutes:  optField(r.EntryDelayMinutes.Value, r.EntryDelayMinutes.Set, int32Of),
			Continuous:         optField(r.Continuous.Value, r.Continuous.Set, same[bool]),
			TrackingDomain:     optField(r.TrackingDomain.Value, r.TrackingDomain.Set, same[string]),
			UtmTracking:        optField(r.UtmTracking.Value, r.UtmTracking.Set, same[bool]),
			UtmSource:          optField(r.UtmSource.Value, r.UtmSource.Set, same[string]),
			UtmMedium:          optField(r.UtmMedium.Value, r.UtmMedium.Set, same[string]),
			UtmCampaign:        optField(r.UtmCampaign.Value, r.UtmCampaign.Set, same[string]),
		},
	}
}

func nilTimeAPI(t *time.Time) api.OptNilDateTime {
	if t == nil {
		return api.OptNilDateTime{Set: true, Null: true}
	}
	return api.NewOptNilDateTime(*t)
}

func idStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// campaignAPI maps a stored campaign.
func campaignAPI(c campaign.Campaign) api.Campaign {
	out := api.Campaign{
		ID: c.ID, OrganizationID: api.NewOptUUID(c.OrganizationID), Name: c.Name,
		Description: api.NewOptString(c.Description), Status: api.CampaignStatus(c.Status),
		Kind: api.NewOptCampaignKind(api.CampaignKind(c.Kind)), StopOnReply: api.NewOptBool(c.StopOnReply),
		OpenTracking: api.NewOptBool(c.OpenTracking), LinkTracking: api.NewOptBool(c.LinkTracking),
		TextOnly: api.NewOptBool(c.TextOnly), DailyLimit: api.NewOptInt(int(c.DailyLimit)),
		UnsubscribeHeader: api.NewOptBool(c.UnsubscribeHeader), RiskyEmails: api.NewOptBool(c.RiskyEmails),
		Cc: c.Cc, Bcc: c.Bcc, StartDate: nilTimeAPI(c.StartDate), EndDate: nilTimeAPI(c.EndDate),
		Timezone: api.NewOptString(c.Timezone), Days: api.NewOptInt(int(c.Days)),
		StartTime: api.NewOptString(c.StartTime), EndTime: api.NewOptString(c.EndTime),
		ScheduleWindows: windowsAPI(c.Windows()), EmailTags: idStrings(c.EmailTags), Folders: idStrings(c.Folders),
		SegmentIds:      c.SegmentIDs,
		ContactOrderBy:  api.NewOptString(c.ContactOrderBy),
		ContactOrderDir: api.NewOptCampaignContactOrderDir(api.CampaignContactOrderDir(c.ContactOrderDir)),
		SenderStrategy:  api.NewOptCampaignSenderStrategy(api.CampaignSenderStrategy(c.SenderStrategy)),
		RotationMode:    api.NewOptCampaignRotationMode(api.CampaignRotationMode(c.RotationMode)),
		RampEnabled:     api.NewOptBool(c.RampEnabled), RampStart: api.NewOptInt(int(c.RampStart)),
		RampIncrement: api.NewOptInt(int(c.RampIncrement)), RampCeiling: api.NewOptInt(int(c.RampCeiling)),
		RampLevel:         api.NewOptInt(int(c.RampLevel)),
		EspMatchMode:      api.NewOptCampaignEspMatchMode(api.CampaignEspMatchMode(c.EspMatchMode)),
		MaxNewLeadsPerDay: api.NewOptInt(int(c.MaxNewLeadsPerDay)), PrioritizeNewLeads: api.NewOptBool(c.PrioritizeNewLeads),
		EntryDelayMinutes: api.NewOptInt(int(c.EntryDelayMinutes)), Continuous: api.NewOptBool(c.Continuous),
		IdleSince: nilTimeAPI(c.IdleSince), TrackingDomain: api.NewOptString(c.TrackingDomain),
		TrackingDomainVerified:   api.NewOptBool(c.TrackingDomain != "" && c.TrackingDomainVerifiedAt != nil),
		TrackingDomainVerifiedAt: nilTimeAPI(c.TrackingDomainVerifiedAt),
		UtmTracking:              api.NewOptBool(c.UtmTracking), UtmSource: api.NewOptString(c.UtmSource),
		UtmMedium: api.NewOptString(c.UtmMedium), UtmCampaign: api.NewOptString(c.UtmCampaign),
		LastStatusChangeAt: nilTimeAPI(c.LastStatusChangeAt), UpdatedAt: c.UpdatedAt, CreatedAt: c.CreatedAt,
	}
	if c.UserID.Valid {
		out.UserID = api.NewOptUUID(c.UserID.UUID)
	}
	if c.ContactOrderField != nil {
		out.ContactOrderField = api.NewOptNilString(*c.ContactOrderField)
	} else {
		out.ContactOrderField = api.OptNilString{Set: true, Null: true}
	}
	return out
}
