"""Email adapters: SendGrid, Resend, Postmark, Mailgun over HTTP, and SMTP submission."""
