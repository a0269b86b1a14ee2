package template_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/template"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

func TestParseErrorsNameTheRuleAndItsPosition(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, want string
	}{
		{"an unclosed variable is reported where it opens", "Hi,\n\nsee you {{.FirstName",
			`unclosed "{{" (close it with "}}" on the same line) at line 3 column 9`},
		{"a variable does not run onto the next line", "{{.FirstName\n}}",
			`unclosed "{{" (close it with "}}" on the same line) at line 1 column 1`},
		{"columns count characters, not bytes", "héllo wörld {{.X",
			`unclosed "{{" (close it with "}}" on the same line) at line 1 column 13`},
		{"an unknown function is named", "Hi {{.FirstName | upper}}",
			`unknown function "upper" (the one function is default, as in {{.FirstName | default "there"}}) at line 1 column 19`},
		{"the double-pipe fallback is refused with the right syntax", `{{.FirstName || "there"}}`,
			`unknown "||" (write a fallback as {{.FirstName | default "there"}}) at line 1 column 14`},
		{"a pipe needs a function", `{{.FirstName | }}`,
			`"|" needs a function: write a fallback as {{.FirstName | default "there"}} at line 1 column 16`},
		{"default needs a quoted string", `{{.FirstName | default there}}`,
			`default needs one double-quoted string, as in {{.FirstName | default "there"}} at line 1 column 24`},
		{"an unclosed fallback string is reported", `{{.FirstName | default "there}}`,
			`unclosed string in "{{ }}" (end it with a double quote) at line 1 column 24`},
		{"a bad escape in the fallback is reported", `{{.FirstName | default "a\qb"}}`,
			`invalid string "a\qb" (use Go-style escapes such as \" and \n) at line 1 column 24`},
		{"text after the fallback is refused", `{{.FirstName | default "a" "b"}}`,
			`unexpected "\"b\"" after the fallback string at line 1 column 28`},
		{"a variable without a dot says how to write it", "Hi {{first_name}}",
			`a variable starts with a dot: write {{.first_name}} at line 1 column 6`},
		{"an empty variable is refused", "{{ }}",
			`empty "{{ }}" (write a variable such as {{.FirstName}}) at line 1 column 1`},
		{"an empty name between dots is refused", "{{.Custom..x}}",
			`variable {{.Custom..x}} has an empty name (names are joined by single dots) at line 1 column 4`},
		{"a space inside a name is refused", "{{.First Name}}",
			`unexpected "Name" after {{.First (a variable is a name and an optional fallback, as in {{.FirstName | default "there"}}) at line 1 column 10`},
		{"standard fields have no fields", "{{.FirstName.x}}", `{{.FirstName}} has no fields at line 1 column 4`},
		{"the signature has no fields", "{{.Signature.html}}", `{{.Signature}} has no fields at line 1 column 4`},
		{"an unknown sender field is named", "{{.Sender.Phone}}",
			`unknown sender field {{.Sender.Phone}} (use Sender.Name, Sender.FirstName or Sender.Email) at line 1 column 4`},
		{"an unknown campaign field is named", "{{.Campaign.ID}}",
			`unknown campaign field {{.Campaign.ID}} (use Campaign.Name) at line 1 column 4`},
		{"a custom field takes exactly one name", "{{.Custom}}",
			`a custom field is written {{.Custom.<name>}}, one name after Custom at line 1 column 4`},
		{"an app value needs a field", "{{.App.crm}}",
			`an app value is written {{.App.<output_key>.<field>}}, naming the step's output key and a field at line 1 column 4`},
		{"custom fields are not nested", "{{.industry.sub}}",
			`unknown variable {{.industry.sub}} (custom fields are not nested; App values are written {{.App.<output_key>.<field>}}) at line 1 column 4`},
		{"an unclosed spintax group is reported where it opens", "Hello.\n  {Hi|Hey there",
			`unbalanced "{" in spintax (close the group with "}") at line 2 column 3`},
		{"spintax nested too deep is refused", strings.Repeat("{a|", 11) + strings.Repeat("}", 11),
			`spintax nested deeper than 10 levels at line 1 column 31`},
		{"an error inside a spintax option is found", "{Hi|Hey {{.Sender.Title}}}",
			`unknown sender field {{.Sender.Title}} (use Sender.Name, Sender.FirstName or Sender.Email) at line 1 column 12`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := template.Parse(tc.src)
			var ae *apierror.Error
			require.True(t, errors.As(err, &ae), "want an *apierror.Error, got %v", err)
			require.Equal(t, "invalid_template", ae.Code)
			require.Equal(t, 400, ae.Status)
			require.Equal(t, tc.want, ae.Message)
		})
	}
}

func TestParseRefusesSourcesOverTheLengthLimit(t *testing.T) {
	t.Parallel()
	_, err := template.Parse(strings.Repeat("é", template.MaxLen))
	require.NoError(t, err, "the limit counts characters, not bytes")
	_, err = template.Parse(strings.Repeat("a", template.MaxLen+1))
	require.ErrorContains(t, err, "a template may have at most 200000 characters; this one has 200001")
}

func TestParseAcceptsSpintaxNestedToTheLimit(t *testing.T) {
	t.Parallel()
	_, err := template.Parse(strings.Repeat("{a|", 10) + strings.Repeat("}", 10))
	require.NoError(t, err)
}

func TestParseStaysLinearOnManyUnmatchedBraces(t *testing.T) {
	t.Parallel()
	src := strings.Repeat("{ ", template.MaxLen/2)
	tm, err := template.Parse(src)
	require.NoError(t, err)
	r := (&template.Message{Plain: tm}).Render(ada(), template.Options{})
	require.Equal(t, src, r.Plain, "unmatched single braces are literal text")
}
