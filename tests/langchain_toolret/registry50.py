"""Fifty invented tools, as a new user's agent would have them (real LangChain tools, one module)."""

from __future__ import annotations

from langchain_core.tools import BaseTool, StructuredTool

#: (name, description) of each tool; every tool takes one free-text argument ``request``.
SPECS = [
    ("book_flight", "Book a plane ticket between two airports on a given date."),
    ("cancel_booking", "Cancel an existing flight, hotel or restaurant booking by its reference."),
    ("book_hotel", "Reserve a hotel room in a city for given check-in and check-out dates."),
    ("book_restaurant", "Reserve a table at a restaurant for a number of people."),
    ("rent_car", "Rent a car at a pick-up location for a date range."),
    ("turn_on_lights", "Turn on the smart lights in a room of the house."),
    ("turn_off_lights", "Turn off the smart lights in a room of the house."),
    ("set_thermostat", "Set the home thermostat to a target temperature."),
    ("lock_door", "Lock a smart door lock of the house."),
    ("play_music", "Play music: a song, an artist, an album or a genre such as jazz or rock."),
    ("pause_music", "Pause the music that is currently playing."),
    ("set_volume", "Change the speaker volume level."),
    ("get_weather", "Current weather and forecast for a city."),
    ("convert_currency", "Convert an amount of money from one currency to another."),
    ("get_stock_price", "Latest stock market price of a company ticker."),
    ("send_email", "Send an e-mail message to a recipient."),
    ("read_inbox", "List the latest e-mails in the user's inbox."),
    ("send_sms", "Send a text message (SMS) to a phone number."),
    ("call_contact", "Start a phone call with a contact."),
    ("create_calendar_event", "Create a meeting or appointment in the user's calendar."),
    ("list_calendar_events", "List the events in the user's calendar for a day."),
    ("set_alarm", "Set an alarm clock for a time."),
    ("set_timer", "Start a countdown timer for a duration."),
    ("set_reminder", "Remind the user of something at a given time."),
    ("translate_text", "Translate text into another language."),
    ("search_web", "Search the web and return result snippets."),
    ("get_news", "Latest news headlines on a topic."),
    ("get_directions", "Driving or walking directions between two places."),
    ("find_nearby_places", "Find shops, cafes or other places near a location."),
    ("order_food", "Order food delivery from a restaurant."),
    ("order_taxi", "Order a taxi or ride to a destination."),
    ("track_package", "Track the delivery status of a parcel by its tracking number."),
    ("pay_bill", "Pay a utility bill from the user's bank account."),
    ("transfer_money", "Transfer money to another bank account."),
    ("check_balance", "Check the balance of the user's bank account."),
    ("add_to_shopping_list", "Add an item to the shopping list."),
    ("create_note", "Write a note and save it."),
    ("read_file", "Read a text file from disk."),
    ("write_file", "Write text into a file on disk."),
    ("compress_files", "Compress files into a zip archive."),
    ("convert_document_to_pdf", "Convert a document to a PDF file."),
    ("resize_image", "Resize an image to a width and height."),
    ("calculate", "Evaluate an arithmetic expression."),
    ("calculate_mortgage", "Monthly payment of a mortgage loan."),
    ("define_word", "Dictionary definition of a word."),
    ("get_recipe", "Find a cooking recipe for a dish."),
    ("track_workout", "Log a workout such as a run or a gym session."),
    ("count_steps", "How many steps the user walked today."),
    ("start_vacuum", "Start the robot vacuum cleaner."),
    ("water_plants", "Start the garden irrigation to water the plants."),
]
assert len(SPECS) == 50 and len({n for n, _ in SPECS}) == 50


def make_tool(name: str, description: str) -> BaseTool:
    def run(request: str) -> str:
        return f"{name} done: {request}"

    return StructuredTool.from_function(run, name=name, description=description)


def registry() -> list[BaseTool]:
    """The fifty tools, fresh objects each call."""
    return [make_tool(name, description) for name, description in SPECS]
