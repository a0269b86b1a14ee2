package handlers

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// CampaignsGetAdvanced answers a campaign's advanced blocks, each filled with its defaults where never set.
func (h *Campaigns) CampaignsGetAdvanced(ctx context.Context, params api.CampaignsGetAdvancedParams) (*api.CampaignAdvancedSettings, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var c campaign.Campaign
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		c, err = h.store.Get(ctx, tx, org, params.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	o, err := campaign.Advanced(c)
	if err != nil {
		return nil, err
	}
	out := &api.CampaignAdvancedSettings{CampaignID: c.ID, Overrides: overridesAPI(o)}
	if c.AdvancedUpdatedAt != nil {
		out.UpdatedAt = api.NewOptDateTime(*c.AdvancedUpdatedAt)
	}
	return out, nil
}

// CampaignsUpdateAdvanced replaces each block sent as a whole; the blocks not sent keep their values.
func (h *Campaigns) CampaignsUpdateAdvanced(ctx context.Context, req *api.CampaignAdvancedUpdate, params api.CampaignsUpdateAdvancedParams) error {
	org, err := tenantCaller(ctx)
	if err != nil {
		return err
	}
	blocks := blocksOf(req.Settings)
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		return h.store.UpdateAdvanced(ctx, tx, org, params.ID, blocks)
	})
}

func int32Or(o api.OptInt, d int32) int32 {
	if v, ok := o.Get(); ok {
		return int32(v)
	}
	return d
}

// sentList is a list field of a block sent: its value when sent, the default otherwise.
func sentList[T any](v, d []T) []T {
	if v == nil {
		return d
	}
	return v
}

// blocksOf maps the blocks of a request. A block sent is whole: its fields not sent take their defaults, never
// the stored values.
func blocksOf(s api.AdvancedOutreachSettings) campaign.Blocks {
	def := campaign.DefaultOverrides()
	var b campaign.Blocks
	if x, ok := s.BouncePipeline.Get(); ok {
		d := def.BouncePipeline
		b.BouncePipeline = &campaign.BouncePipeline{Enabled: x.Enabled.Or(d.Enabled),
			AutoSuppressOnBounce:        x.AutoSuppressOnBounce.Or(d.AutoSuppressOnBounce),
			AutoSuppressOnComplaint:     x.AutoSuppressOnComplaint.Or(d.AutoSuppressOnComplaint),
			AutoSuppressOnUnsubscribe:   x.AutoSuppressOnUnsubscribe.Or(d.AutoSuppressOnUnsubscribe),
			AutoPauseCampaignOnSpike:    x.AutoPauseCampaignOnSpike.Or(d.AutoPauseCampaignOnSpike),
			PauseBounceRateThreshold:    x.PauseBounceRateThreshold.Or(d.PauseBounceRateThreshold),
			PauseComplaintRateThreshold: x.PauseComplaintRateThreshold.Or(d.PauseComplaintRateThreshold)}
	}
	if x, ok := s.TaskReliability.Get(); ok {
		d := def.TaskReliability
		b.TaskReliability = &campaign.TaskReliability{Enabled: x.Enabled.Or(d.Enabled), DLQEnabled: x.DlqEnabled.Or(d.DLQEnabled),
			MaxAttempts: int32Or(x.MaxAttempts, d.MaxAttempts), ExecutionWindowSeconds: int32Or(x.ExecutionWindowSeconds, d.ExecutionWindowSeconds)}
	}
	if x, ok := s.AbTesting.Get(); ok {
		d := def.ABTesting
		b.ABTesting = &campaign.ABTesting{Enabled: x.Enabled.Or(d.Enabled), AutoPromoteWinner: x.AutoPromoteWinner.Or(d.AutoPromoteWinner),
			DefaultWinningRule: string(x.DefaultWinningRule.Or(api.AdvancedOutreachSettingsAbTestingDefaultWinningRule(d.DefaultWinningRule))),
			MinSampleSize:      int32Or(x.MinSampleSize, d.MinSampleSize)}
	}
	if x, ok := s.ReplyIntent.Get(); ok {
		b.ReplyIntent = replyIntentOf(x, def.ReplyIntent)
	}
	if x, ok := s.SendTimeOptimization.Get(); ok {
		d := def.SendTimeOptimization
		b.SendTimeOptimization = &campaign.SendTimeOptimization{Enabled: x.Enabled.Or(d.Enabled),
			UseContactTimezone:      x.UseContactTimezone.Or(d.UseContactTimezone),
			DefaultContactTimezone:  x.DefaultContactTimezone.Or(d.DefaultContactTimezone),
			PreferredHours:          sentList(x.PreferredHours, d.PreferredHours),
			WeekendWeightMultiplier: x.WeekendWeightMultiplier.Or(d.WeekendWeightMultiplier)}
	}
	if x, ok := s.Preflight.Get(); ok {
		d := def.Preflight
		b.Preflight = &campaign.Preflight{Enabled: x.Enabled.Or(d.Enabled), CheckTrackingDomain: x.CheckTrackingDomain.Or(d.CheckTrackingDomain),
			CheckUnsubscribeHeader:   x.CheckUnsubscribeHeader.Or(d.CheckUnsubscribeHeader),
			CheckABVariantConfigured: x.CheckAbVariantConfigured.Or(d.CheckABVariantConfigured),
			CheckDailyLimit:          x.CheckDailyLimit.Or(d.CheckDailyLimit), CheckScheduleWindow: x.CheckScheduleWindow.Or(d.CheckScheduleWindow),
			CheckContentScore: x.CheckContentScore.Or(d.CheckContentScore), MinContentScore: int32Or(x.MinContentScore, d.MinContentScore)}
	}
	if x, ok := s.Dashboard.Get(); ok {
		d := def.Dashboard
		b.Dashboard = &campaign.Dashboard{Enabled: x.Enabled.Or(d.Enabled), ShowSuppressionLog: x.ShowSuppressionLog.Or(d.ShowSuppressionLog),
			ShowIntentSummary: x.ShowIntentSummary.Or(d.ShowIntentSummary), ShowDLQStats: x.ShowDlqStats.Or(d.ShowDLQStats)}
	}
	if x, ok := s.Unsubscribe.Get(); ok {
		d := def.Unsubscribe
		b.Unsubscribe = &campaign.Unsubscribe{Mode: string(x.Mode.Or(api.AdvancedOutreachSettingsUnsubscribeMode(d.Mode))),
			Text: x.Text.Or(d.Text), LinkIntro: x.LinkIntro.Or(d.LinkIntro), LinkText: x.LinkText.Or(d.LinkText)}
	}
	return b
}

// replyIntentOf maps a reply_intent block; crm_task_intents null means none.
func replyIntentOf(x api.AdvancedOutreachSettingsReplyIntent, d campaign.ReplyIntent) *campaign.ReplyIntent {
	out := &campaign.ReplyIntent{Enabled: x.Enabled.Or(d.Enabled),
		PositiveKeywords: sentList(x.PositiveKeywords, d.PositiveKeywords), NegativeKeywords: sentList(x.NegativeKeywords, d.NegativeKeywords),
		OutOfOfficeKeywords: sentList(x.OutOfOfficeKeywords, d.OutOfOfficeKeywords), QuestionKeywords: sentList(x.QuestionKeywords, d.QuestionKeywords),
		AutoCreateCRMTask: x.AutoCreateCrmTask.Or(d.AutoCreateCRMTask), CRMTaskIntents: d.CRMTaskIntents,
		AutoPauseOnNegative:              x.AutoPauseOnNegative.Or(d.AutoPauseOnNegative),
		AutoSuppressOnUnsubscribeKeyword: x.AutoSuppressOnUnsubscribeKeyword.Or(d.AutoSuppressOnUnsubscribeKeyword),
		HoldOnOutOfOffice:                x.HoldOnOutOfOffice.Or(d.HoldOnOutOfOffice),
		OutOfOfficeHoldDays:              int32Or(x.OutOfOfficeHoldDays, d.OutOfOfficeHoldDays)}
	if x.CrmTaskIntents.Set {
		out.CRMTaskIntents = make([]string, len(x.CrmTaskIntents.Value))
		for i, v := range x.CrmTaskIntents.Value {
			out.CRMTaskIntents[i] = string(v)
		}
	}
	return out
}

// overridesAPI maps every block with every field.
func overridesAPI(o campaign.Overrides) api.AdvancedOutreachSettings {
	bp, tr, ab, ri, st, pf, dash, un := o.BouncePipeline, o.TaskReliability, o.ABTesting, o.ReplyIntent, o.SendTimeOptimization,
		o.Preflight, o.Dashboard, o.Unsubscribe
	intents := make([]api.AdvancedOutreachSettingsReplyIntentCrmTaskIntentsItem, len(ri.CRMTaskIntents))
	for i, v := range ri.CRMTaskIntents {
		intents[i] = api.AdvancedOutreachSettingsReplyIntentCrmTaskIntentsItem(v)
	}
	return api.AdvancedOutreachSettings{
		BouncePipeline: api.NewOptAdvancedOutreachSettingsBouncePipeline(api.AdvancedOutreachSettingsBouncePipeline{
			Enabled: api.NewOptBool(bp.Enabled), AutoSuppressOnBounce: api.NewOptBool(bp.AutoSuppressOnBounce),
			AutoSuppressOnComplaint:     api.NewOptBool(bp.AutoSuppressOnComplaint),
			AutoSuppressOnUnsubscribe:   api.NewOptBool(bp.AutoSuppressOnUnsubscribe),
			AutoPauseCampaignOnSpike:    api.NewOptBool(bp.AutoPauseCampaignOnSpike),
			PauseBounceRateThreshold:    api.NewOptFloat64(bp.PauseBounceRateThreshold),
			PauseComplaintRateThreshold: api.NewOptFloat64(bp.PauseComplaintRateThreshold)}),
		TaskReliability: api.NewOptAdvancedOutreachSettingsTaskReliability(api.AdvancedOutreachSettingsTaskReliability{
			Enabled: api.NewOptBool(tr.Enabled), DlqEnabled: api.NewOptBool(tr.DLQEnabled),
			MaxAttempts: api.NewOptInt(int(tr.MaxAttempts)), ExecutionWindowSeconds: api.NewOptInt(int(tr.ExecutionWindowSeconds))}),
		AbTesting: api.NewOptAdvancedOutreachSettingsAbTesting(api.AdvancedOutreachSettingsAbTesting{
			Enabled:            api.NewOptBool(ab.Enabled),
			DefaultWinningRule: api.NewOptAdvancedOutreachSettingsAbTestingDefaultWinningRule(api.AdvancedOutreachSettingsAbTestingDefaultWinningRule(ab.DefaultWinningRule)),
			AutoPromoteWinner:  api.NewOptBool(ab.AutoPromoteWinner), MinSampleSize: api.NewOptInt(int(ab.MinSampleSize))}),
		ReplyIntent: api.NewOptAdvancedOutreachSettingsReplyIntent(api.AdvancedOutreachSettingsReplyIntent{
			Enabled: api.NewOptBool(ri.Enabled), PositiveKeywords: ri.PositiveKeywords, NegativeKeywords: ri.NegativeKeywords,
			OutOfOfficeKeywords: ri.OutOfOfficeKeywords, QuestionKeywords: ri.QuestionKeywords,
			AutoCreateCrmTask:                api.NewOptBool(ri.AutoCreateCRMTask),
			CrmTaskIntents:                   api.NewOptNilAdvancedOutreachSettingsReplyIntentCrmTaskIntentsItemArray(intents),
			AutoPauseOnNegative:              api.NewOptBool(ri.AutoPauseOnNegative),
			AutoSuppressOnUnsubscribeKeyword: api.NewOptBool(ri.AutoSuppressOnUnsubscribeKeyword),
			HoldOnOutOfOffice:                api.NewOptBool(ri.HoldOnOutOfOffice), OutOfOfficeHoldDays: api.NewOptInt(int(ri.OutOfOfficeHoldDays))}),
		SendTimeOptimization: api.NewOptAdvancedOutreachSettingsSendTimeOptimization(api.AdvancedOutreachSettingsSendTimeOptimization{
			Enabled: api.NewOptBool(st.Enabled), UseContactTimezone: api.NewOptBool(st.UseContactTimezone),
			DefaultContactTimezone: api.NewOptString(st.DefaultContactTimezone), PreferredHours: st.PreferredHours,
			WeekendWeightMultiplier: api.NewOptFloat64(st.WeekendWeightMultiplier)}),
		Preflight: api.NewOptAdvancedOutreachSettingsPreflight(api.AdvancedOutreachSettingsPreflight{
			Enabled: api.NewOptBool(pf.Enabled), CheckTrackingDomain: api.NewOptBool(pf.CheckTrackingDomain),
			CheckUnsubscribeHeader:   api.NewOptBool(pf.CheckUnsubscribeHeader),
			CheckAbVariantConfigured: api.NewOptBool(pf.CheckABVariantConfigured), CheckDailyLimit: api.NewOptBool(pf.CheckDailyLimit),
			CheckScheduleWindow: api.NewOptBool(pf.CheckScheduleWindow), CheckContentScore: api.NewOptBool(pf.CheckContentScore),
			MinContentScore: api.NewOptInt(int(pf.MinContentScore))}),
		Dashboard: api.NewOptAdvancedOutreachSettingsDashboard(api.AdvancedOutreachSettingsDashboard{
			Enabled: api.NewOptBool(dash.Enabled), ShowSuppressionLog: api.NewOptBool(dash.ShowSuppressionLog),
			ShowIntentSummary: api.NewOptBool(dash.ShowIntentSummary), ShowDlqStats: api.NewOptBool(dash.ShowDLQStats)}),
		Unsubscribe: api.NewOptAdvancedOutreachSettingsUnsubscribe(api.AdvancedOutreachSettingsUnsubscribe{
			Mode: api.NewOptAdvancedOutreachSettingsUnsubscribeMode(api.AdvancedOutreachSettingsUnsubscribeMode(un.Mode)),
			Text: api.NewOptString(un.Text), LinkIntro: api.NewOptString(un.LinkIntro), LinkText: api.NewOptString(un.LinkText)}),
	}
}
