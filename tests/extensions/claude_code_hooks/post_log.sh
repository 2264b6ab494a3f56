#!/bin/sh
# A PostToolUse logger in Claude Code's style: appends the event's stdin to a log file in the
# project directory.
cat >> "$CLAUDE_PROJECT_DIR/tool-calls.log"
