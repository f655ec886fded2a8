"""The wait model: who waits, on what (and, in a later step, held by whom).

``model`` declares the resources a session can wait for and the shape of the waits frame;
``states`` maps every thread and session state the MySQL and MariaDB manuals list to its resource;
``counters`` is the catalogue of the status counters that measure waits; ``read`` builds the waits
frame of a timeline. No Django.
"""
