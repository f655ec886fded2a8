"""The timeline and what it is made of: every source on one clock (``timeline.Timeline``), the capture
read moment by moment (``primary``), frames derived from the InnoDB monitor and the kernel
(``context``), conditions turned into windows (``windows``), the series the charts read (``series``)."""
