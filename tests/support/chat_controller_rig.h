// A ChatController over real SQLite stores in a temporary directory, answered by a FakeChatEngine: what the
// Chat tests that need no model build on. Members are declared in construction order, so they are destroyed
// engine first, directory last.
#pragma once

#include <QTemporaryDir>

#include "services/chatcontroller.h"
#include "services/store/chatstore.h"
#include "services/store/database.h"
#include "services/store/inspectionstore.h"
#include "services/store/preferencestore.h"
#include "support/fake_chat_engine.h"

struct ChatControllerRig {
  ChatControllerRig()
      : opened(db.open(dir.filePath(QStringLiteral("chats.db"))) == Database::OpenState::Ok),
        store(db),
        inspections(db),
        preferences(db),
        chat(&store, &inspections),
        engine(&chat) {
    chat.setPreferenceStore(&preferences);
  }

  QTemporaryDir dir;
  Database db;
  bool opened;  // check it first: the stores below are built either way
  ChatStore store;
  InspectionStore inspections;
  PreferenceStore preferences;
  ChatController chat;
  FakeChatEngine engine;
};
