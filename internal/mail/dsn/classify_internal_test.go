package dsn

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClassifyAppliesTheFirstRuleThatMatches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		action   string
		status   string
		smtp     int
		severity Severity
		rule     string
	}{
		{"A delayed recipient is soft whatever its code", "delayed", "5.1.1", 550, Soft, RuleActionDelayed},
		{"A full mailbox with a 5.2.2 status is soft", "failed", "5.2.2", 552, Soft, RuleMailboxFull},
		{"A 552 without an enhanced code is a full mailbox and soft", "failed", "", 552, Soft, RuleMailboxFull},
		{"A 5.x.x status is hard even with a 4xx reply code", "failed", "5.7.1", 451, Hard, RuleStatusClass5},
		{"A 4.x.x status is soft even with a 5xx reply code", "failed", "4.4.7", 554, Soft, RuleStatusClass4},
		{"A 5xx reply code without status is hard", "failed", "", 550, Hard, RuleSMTP5xx},
		{"A 4xx reply code without status is soft", "failed", "", 421, Soft, RuleSMTP4xx},
		{"A failed recipient without any code is hard", "failed", "", 0, Hard, RuleActionFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			severity, rule := classify(tc.action, tc.status, tc.smtp)
			require.Equal(t, tc.severity, severity)
			require.Equal(t, tc.rule, rule)
		})
	}
}
