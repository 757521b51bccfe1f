// Preference pairs as the trainer's JSONL (engine/train/preference_data.h, TRL's conversational
// preference format), one row per pair:
//   {"prompt": [{"role", "content"}, ... ending with the user turn],
//    "chosen": [{"role": "assistant", "content"}], "rejected": [{"role": "assistant", "content"}]}
// which `llm-workbench-cli train --recipe reward|dpo --data FILE` and TRL read as they are.
#pragma once

#include <QByteArray>
#include <QList>

#include "store/preferencestore.h"

// One compact JSON object per line, each line ended by '\n'. Pairs the trainer would refuse
// (PreferenceStore::problemWith; only a damaged database holds them) are left out and counted in
// `skipped` when given.
QByteArray preferencePairsToJsonl(const QList<StoredPreferencePair>& pairs, int* skipped = nullptr);
