// Package compose is the one place a campaign message is composed for a contact: the template preview, the
// test email and test runs compose through it now, and the sequence engine will, so what a person previews is
// what a prospect receives.
//
// Compose is a pure function of its Input: the contact (standard fields and custom fields), the sending
// mailbox (name, send-as address, signatures), the campaign (name, UTM tagging when utm_tracking is on,
// text_only), App values, and the step with its sequence. It renders the step's subject, plain body and HTML
// body, or the content given in its place (an A/B variant's, or a preview's text). The load functions read those
// inputs, and the files a step sends, from the organization's rows.
//
// Rules:
//   - The spintax seed is template.Seed(contact id, step id), so every render of a (contact, step) picks the
//     same words: a preview, a test send and the real send agree.
//   - A thread_reply step whose subject is empty, or the same as the conversation's, takes the conversation's
//     subject: "Re: " and the first email step's subject rendered for the same contact (with that step's seed).
//     Message.ThreadReply tells the sender to carry In-Reply-To and References of the earlier messages.
//   - text_only campaigns get no HTML part; their HTML body is not even parsed.
//   - UTM tagging applies when the campaign's utm_tracking is on.
//   - Tracking applies only to a campaign send that passes Input.Tracking, and never to a text_only campaign.
//     open_tracking adds a 1x1 pixel (BaseURL/t/o/{token}) to a message with an HTML body, before </body>
//     when there is one; link_tracking rewrites each http(s) link of both bodies to BaseURL/t/c/{token},
//     the click token carrying the link's number and its UTM-tagged target, so the redirect needs no
//     database read. mailto:, tel:, anchors, other schemes and links over tracking.MaxURLLength go out as
//     written. Without tracking the message is exactly what it would be without this rule.
//   - A campaign send that passes Input.Unsubscribe ends each body it has with the campaign's unsubscribe line
//     (the advanced unsubscribe block): mode text appends the text, mode link the intro and a link reading
//     link_text to the recipient's unsubscribe page (the plain body spells the address out), mode off nothing.
//     The line follows the rendered content (before </body>, ahead of the pixel), so it is never a tracked
//     link; text_only campaigns get it too. Previews and test sends pass none.
//   - Content that does not compile is a 400 invalid_template naming the part, the rule and its position.
//   - Message.Sendable refuses a message with an unresolved variable (listing them) or nothing to send;
//     every path that enqueues calls it, so such a message is never enqueued.
package compose
