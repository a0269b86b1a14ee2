package classify_test

import (
	"bytes"
	"time"

	"github.com/jhillyerd/enmime/v2"

	"github.com/outflowhq/outflow/internal/inbox/classify"
	"github.com/outflowhq/outflow/internal/mail/dsn"
)

// parseMessage reads a raw message as the mail sync does (dsn.Parse for reports, enmime for the rest), with
// its Date header as the received time.
func parseMessage(raw []byte) classify.Message {
	var m classify.Message
	if r, ok := dsn.Parse(raw); ok {
		m.Report = &r
	}
	env, err := enmime.ReadEnvelope(bytes.NewReader(raw))
	if err != nil {
		return m
	}
	m.Headers = map[string][]string{}
	for _, k := range env.GetHeaderKeys() {
		m.Headers[k] = env.GetHeaderValues(k)
	}
	if from, err := env.AddressList("From"); err == nil && len(from) > 0 {
		m.From, m.FromName = from[0].Address, from[0].Name
	}
	m.Subject, m.Text, m.HTML = env.GetHeader("Subject"), env.Text, env.HTML
	if d, err := env.Date(); err == nil {
		m.Received = d
	}
	return m
}

// fixed is the clock of the unit tests: messages without a Date were received then.
var fixed = time.Date(2025, 7, 10, 9, 30, 0, 0, time.UTC)
