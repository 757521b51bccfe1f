// Test hooks of the desktop app: environment variables that let a test drive the real executable
// from outside (tests/app/test_app_kill.cpp). None is set in normal use, and with none set nothing
// here does anything.
//
//   WB_TEST_AUTOSEND=TEXT     Once the startup model has loaded, start a new chat and send TEXT, with
//                             replies allowed up to the model's whole context (its end tokens banned). When a reply ends,
//                             do it again, so that a reply is always being written until the app
//                             is killed (a kill test needs one in flight, whatever the timing).
//   WB_TEST_QUIT_WHEN_READY=1 Once the startup model has loaded (or failed to), print one line
//                             "ready model=NAME chats=N problem=TEXT" on stdout and quit with 0.
//
// The database is chosen with WB_SESSION_DB (AppController), as the other tests do.
#pragma once

class AppController;

void installTestHooks(AppController& controller);
