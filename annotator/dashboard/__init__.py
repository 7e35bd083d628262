"""The admin's dashboard: its statistics and the charts drawn from them."""
