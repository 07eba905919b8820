"""SMS adapters: Twilio (Programmable Messaging) and Vonage (Messages API)."""
