package template

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// utm parameter bits, in the order they are added.
const (
	utmSource uint8 = 1 << iota
	utmMedium
	utmCampaign
	utmContent
	utmAll = utmSource | utmMedium | utmCampaign | utmContent
)

// utmNames are the parameters by bit position.
var utmNames = [...]string{"utm_source", "utm_medium", "utm_campaign", "utm_content"}

// MaxUTMSourceLen is the most characters utm_source may have.
const MaxUTMSourceLen = 128

// CheckUTMSource validates a campaign's utm_source as a person sets it, so create, update and duplicate
// refuse the same values with the same message.
func CheckUTMSource(s string) error {
	if n := utf8.RuneCountInString(s); n > MaxUTMSourceLen {
		return apierror.BadRequest("invalid_utm_source", fmt.Sprintf("utm_source must be at most %d characters; it has %d.", MaxUTMSourceLen, n))
	}
	return nil
}

// UTM is a campaign's link tagging, resolved once per campaign: defaults applied and values escaped, so
// tagging a link at render time only appends.
type UTM struct {
	// params are "utm_x=value" for source, medium and campaign, query-escaped.
	params [3]string
}

// NewUTM resolves a campaign's utm_source, utm_medium and utm_campaign: empty values default to "outflow",
// "email" and the campaign name as a slug (lowercase ASCII letters and digits, other runs as "-"; "campaign"
// when the name has neither).
func NewUTM(source, medium, campaign, campaignName string) *UTM {
	if source == "" {
		source = "outflow"
	}
	if medium == "" {
		medium = "email"
	}
	if campaign == "" {
		campaign = slug(campaignName)
	}
	u := &UTM{}
	for i, v := range [...]string{source, medium, campaign} {
		u.params[i] = utmNames[i] + "=" + url.QueryEscape(v)
	}
	return u
}

// slug is name in lowercase ASCII letters and digits with every other run as one "-", trimmed.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteByte(c)
			dash = false
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "campaign"
	}
	return b.String()
}

// tag is l's URL with the utm parameters it lacks, utm_content naming link number index ("link-1" for 0),
// inserted before the fragment.
func (u *UTM) tag(l *link, index int) string {
	missing := utmAll &^ l.present
	if missing == 0 {
		return l.url
	}
	var b strings.Builder
	b.Grow(len(l.url) + len(u.params[0]) + len(u.params[1]) + len(u.params[2]) + 24)
	b.WriteString(l.url[:l.frag])
	sep := byte('&')
	if !l.query {
		sep = '?'
	} else if last := l.url[l.frag-1]; last == '?' || last == '&' {
		sep = 0
	}
	for bit := range utmNames {
		if missing&(1<<bit) == 0 {
			continue
		}
		if sep != 0 {
			b.WriteByte(sep)
		}
		sep = '&'
		if bit < len(u.params) {
			b.WriteString(u.params[bit])
			continue
		}
		b.WriteString("utm_content=link-")
		b.WriteString(strconv.Itoa(index + 1))
	}
	b.WriteString(l.url[l.frag:])
	return b.String()
}
