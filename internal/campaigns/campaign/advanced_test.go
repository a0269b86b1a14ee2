package campaign_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// defaults returns the default blocks, every one sent, for a case to break one field of.
func defaults() campaign.Blocks {
	d := campaign.DefaultOverrides()
	return campaign.Blocks{BouncePipeline: &d.BouncePipeline, TaskReliability: &d.TaskReliability, ABTesting: &d.ABTesting,
		ReplyIntent: &d.ReplyIntent, SendTimeOptimization: &d.SendTimeOptimization, Preflight: &d.Preflight,
		Dashboard: &d.Dashboard, Unsubscribe: &d.Unsubscribe}
}

func TestNormalizeBlocksAcceptsTheDefaultsAndTheEdgesOfEveryRange(t *testing.T) {
	t.Parallel()
	_, err := campaign.NormalizeBlocks(defaults())
	require.NoError(t, err)
	b := defaults()
	b.BouncePipeline.PauseBounceRateThreshold, b.BouncePipeline.PauseComplaintRateThreshold = 0, 1
	b.TaskReliability.MaxAttempts, b.TaskReliability.ExecutionWindowSeconds = 10, 60
	b.ABTesting.MinSampleSize, b.ABTesting.DefaultWinningRule = 100000, "click_rate"
	b.ReplyIntent.OutOfOfficeHoldDays, b.ReplyIntent.CRMTaskIntents = 90, nil
	b.SendTimeOptimization.DefaultContactTimezone, b.SendTimeOptimization.WeekendWeightMultiplier = "America/New_York", 10
	b.SendTimeOptimization.PreferredHours = []int{23, 0}
	b.Preflight.MinContentScore = 100
	b.Unsubscribe.Mode, b.Unsubscribe.LinkText = "link", strings.Repeat("é", campaign.MaxUnsubscribeTextChars)
	out, err := campaign.NormalizeBlocks(b)
	require.NoError(t, err)
	require.Equal(t, []int{0, 23}, out.SendTimeOptimization.PreferredHours, "hours are stored in order")
	require.Equal(t, []string{}, out.ReplyIntent.CRMTaskIntents, "null intents are none")
	require.Equal(t, []int{23, 0}, b.SendTimeOptimization.PreferredHours, "the caller's blocks are not written through")
}

func TestNormalizeBlocksTrimsAndDeduplicatesLists(t *testing.T) {
	t.Parallel()
	b := campaign.Blocks{ReplyIntent: &campaign.ReplyIntent{OutOfOfficeHoldDays: 7,
		PositiveKeywords: []string{" Interested ", "interested", "let's talk"},
		CRMTaskIntents:   []string{"question", "positive", "question"}}}
	out, err := campaign.NormalizeBlocks(b)
	require.NoError(t, err)
	require.Equal(t, []string{"Interested", "let's talk"}, out.ReplyIntent.PositiveKeywords)
	require.Equal(t, []string{"positive", "question"}, out.ReplyIntent.CRMTaskIntents)
	require.Equal(t, []string{}, out.ReplyIntent.NegativeKeywords)
	require.Nil(t, out.TaskReliability, "a block not sent stays unsent")
}

func TestNormalizeBlocksRefusesEachBrokenRuleWithItsCode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code, field string
		breakIt     func(b *campaign.Blocks)
	}{
		{"invalid_pause_bounce_rate_threshold", "bounce_pipeline.pause_bounce_rate_threshold", func(b *campaign.Blocks) { b.BouncePipeline.PauseBounceRateThreshold = 5 }},
		{"invalid_pause_complaint_rate_threshold", "bounce_pipeline.pause_complaint_rate_threshold", func(b *campaign.Blocks) { b.BouncePipeline.PauseComplaintRateThreshold = -0.1 }},
		{"invalid_max_attempts", "task_reliability.max_attempts", func(b *campaign.Blocks) { b.TaskReliability.MaxAttempts = 0 }},
		{"invalid_max_attempts", "task_reliability.max_attempts", func(b *campaign.Blocks) { b.TaskReliability.MaxAttempts = 11 }},
		{"invalid_execution_window_seconds", "task_reliability.execution_window_seconds", func(b *campaign.Blocks) { b.TaskReliability.ExecutionWindowSeconds = 59 }},
		{"invalid_execution_window_seconds", "task_reliability.execution_window_seconds", func(b *campaign.Blocks) { b.TaskReliability.ExecutionWindowSeconds = 86401 }},
		{"invalid_default_winning_rule", "ab_testing.default_winning_rule", func(b *campaign.Blocks) { b.ABTesting.DefaultWinningRule = "ctr" }},
		{"invalid_min_sample_size", "ab_testing.min_sample_size", func(b *campaign.Blocks) { b.ABTesting.MinSampleSize = 9 }},
		{"invalid_min_sample_size", "ab_testing.min_sample_size", func(b *campaign.Blocks) { b.ABTesting.MinSampleSize = 100001 }},
		{"invalid_positive_keywords", "reply_intent.positive_keywords", func(b *campaign.Blocks) { b.ReplyIntent.PositiveKeywords = []string{"yes", "  "} }},
		{"invalid_negative_keywords", "reply_intent.negative_keywords", func(b *campaign.Blocks) { b.ReplyIntent.NegativeKeywords = []string{strings.Repeat("n", 101)} }},
		{"invalid_out_of_office_keywords", "reply_intent.out_of_office_keywords", func(b *campaign.Blocks) { b.ReplyIntent.OutOfOfficeKeywords = make([]string, 101) }},
		{"invalid_question_keywords", "reply_intent.question_keywords", func(b *campaign.Blocks) { b.ReplyIntent.QuestionKeywords = []string{"why\nnot"} }},
		{"invalid_crm_task_intents", "reply_intent.crm_task_intents", func(b *campaign.Blocks) { b.ReplyIntent.CRMTaskIntents = []string{"angry"} }},
		{"invalid_out_of_office_hold_days", "reply_intent.out_of_office_hold_days", func(b *campaign.Blocks) { b.ReplyIntent.OutOfOfficeHoldDays = 0 }},
		{"invalid_out_of_office_hold_days", "reply_intent.out_of_office_hold_days", func(b *campaign.Blocks) { b.ReplyIntent.OutOfOfficeHoldDays = 91 }},
		{"invalid_default_contact_timezone", "send_time_optimization.default_contact_timezone", func(b *campaign.Blocks) { b.SendTimeOptimization.DefaultContactTimezone = "Mars/Base" }},
		{"invalid_preferred_hours", "send_time_optimization.preferred_hours", func(b *campaign.Blocks) { b.SendTimeOptimization.PreferredHours = []int{24} }},
		{"invalid_preferred_hours", "send_time_optimization.preferred_hours", func(b *campaign.Blocks) { b.SendTimeOptimization.PreferredHours = []int{9, 10, 9} }},
		{"invalid_weekend_weight_multiplier", "send_time_optimization.weekend_weight_multiplier", func(b *campaign.Blocks) { b.SendTimeOptimization.WeekendWeightMultiplier = 10.5 }},
		{"invalid_min_content_score", "preflight.min_content_score", func(b *campaign.Blocks) { b.Preflight.MinContentScore = 101 }},
		{"invalid_unsubscribe_mode", "unsubscribe.mode", func(b *campaign.Blocks) { b.Unsubscribe.Mode = "footer" }},
		{"invalid_unsubscribe_text", "unsubscribe.text", func(b *campaign.Blocks) { b.Unsubscribe.Mode, b.Unsubscribe.Text = "text", " " }},
		{"invalid_unsubscribe_link_text", "unsubscribe.link_text", func(b *campaign.Blocks) { b.Unsubscribe.Mode, b.Unsubscribe.LinkText = "link", "" }},
		{"invalid_unsubscribe_link_intro", "unsubscribe.link_intro", func(b *campaign.Blocks) { b.Unsubscribe.LinkIntro = strings.Repeat("x", 301) }},
	}
	for _, tc := range cases {
		b := defaults()
		tc.breakIt(&b)
		_, err := campaign.NormalizeBlocks(b)
		var e *apierror.Error
		require.True(t, errors.As(err, &e), "%s: %v", tc.code, err)
		require.Equal(t, 400, e.Status)
		require.Equal(t, tc.code, e.Code)
		require.True(t, strings.HasPrefix(e.Message, tc.field+" "), "the message names %s: %s", tc.field, e.Message)
	}
}

func TestAdvancedReadsStoredBlocksOverTheDefaults(t *testing.T) {
	t.Parallel()
	var c campaign.Campaign
	c.Advanced = []byte(`{"task_reliability":{"enabled":false,"dlq_enabled":false,"max_attempts":2,"execution_window_seconds":600}}`)
	o, err := campaign.Advanced(c)
	require.NoError(t, err)
	want := campaign.DefaultOverrides()
	want.TaskReliability = campaign.TaskReliability{MaxAttempts: 2, ExecutionWindowSeconds: 600}
	require.Equal(t, want, o)

	c.Advanced = []byte(`{}`)
	o, err = campaign.Advanced(c)
	require.NoError(t, err)
	require.Equal(t, campaign.DefaultOverrides(), o)

	c.Advanced = []byte(`{"task_reliability":7}`)
	_, err = campaign.Advanced(c)
	require.Error(t, err, "a damaged column is an error, not silently the defaults")
}
