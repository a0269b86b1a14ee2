// Package template is the one personalisation engine of campaigns: template preview, campaign validation,
// test sends and real sends all parse and render through it, so what a person previews is what a contact
// receives.
//
// A step's subject, plain body and HTML body are each compiled once with Parse (or together with
// ParseMessage) into a program of literal text, variables and spintax groups; Message.Render then fills it in
// for one contact and returns the three parts, the links found and the variables that did not resolve.
//
// # Syntax
//
// Variables are written {{.Name}}:
//
//   - Contact fields: {{.FirstName}}, {{.LastName}}, {{.FullName}} (first and last name joined), {{.Email}},
//     {{.Company}}, {{.Phone}}. Names match case-insensitively with underscores, spaces and dashes ignored,
//     so {{.first_name}} and {{.FIRSTNAME}} are {{.FirstName}}.
//   - Custom fields: {{.Custom.industry}}, or {{.industry}} when no contact field has that name. The key
//     matches exactly, or else by the same case- and underscore-blind rule.
//   - The sender: {{.Sender.Name}}, {{.Sender.FirstName}} (the first word of the name unless set),
//     {{.Sender.Email}}, and {{.Signature}}: the mailbox's HTML signature in an HTML body (its plain
//     signature, escaped, when it has no HTML one) and its plain signature in a plain body or a subject.
//   - The campaign: {{.Campaign.Name}}.
//   - App values captured by earlier app_action steps: {{.App.<output_key>.<field>...}}, following nested
//     objects. Strings print as they are, numbers and booleans as JSON prints them; objects, arrays and null
//     do not resolve.
//   - A fallback for a missing or empty value: {{.FirstName | default "there"}}. The fallback is a Go-style
//     double-quoted string; default is the only function. A variable never spans lines.
//
// Spintax varies the wording between contacts: {Hi|Hello|Hey} picks one option, options may hold variables
// and nested groups ({Hi {{.FirstName}}|{Hello|Hey} there}), and an option may be empty. A "{" is a spintax
// group only when a "|" stands at its own level before its matching "}"; any other brace is literal text, so
// CSS and JSON in HTML survive. "{{" always opens a variable and is never spintax (in "{{{" the first brace is
// literal and the last two open the variable).
//
// # Invariants
//
//   - Parse never panics, refuses sources over MaxLen characters and spintax nested deeper than MaxDepth, and
//     every error names the rule and its position ("unclosed "{{" at line 3 column 7").
//   - Rendering is deterministic: the spintax choice is a function of Options.Seed and the group's position,
//     so a retry or a re-render of the same (contact, step) gives the same text (use Seed to derive it), and
//     a plain body whose groups follow the HTML body's picks the same options.
//   - A variable whose value is missing or blank and that has no fallback is unresolved: it renders as
//     nothing and is listed in Rendered.Unresolved. Rendered.Sendable refuses such a message; callers that
//     send must call it.
//   - Values inserted into an HTML body are HTML-escaped (the HTML signature excepted); plain bodies and
//     subjects are not escaped. A rendered subject holds no CR or LF: each line break becomes one space.
//   - Links are the http and https URLs of a rendered body (a URL a variable inserts counts too): the first
//     href of each <a> tag in an HTML body (not inside comments), bare URLs in a plain body (without the
//     sentence punctuation after them). Subjects have none. They are found at parse time where no variable
//     or spintax can change them, and in the rendered text otherwise, with the same result (FuzzParse checks
//     it). They are numbered in document order, HTML body first; a plain-body link whose URL matches
//     an HTML link not yet matched shares that link's number, so both parts of one message agree. UTM tagging
//     (Options.UTM) adds the utm_* parameters a link lacks, never overriding or duplicating one it has, and
//     keeps its fragment; link tracking (Options.Links) replaces each link with what the rewriter returns for
//     its number and tagged URL, called once per number. mailto:, tel:, relative and "#" links are left alone.
//   - Templates and messages are immutable once parsed and safe to render from many goroutines at once.
package template
