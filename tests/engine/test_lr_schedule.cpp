// Learning-rate schedules (engine/train/lr_schedule.h) against Hugging Face transformers'
// get_*_schedule_with_warmup and torch's StepLR (tests/data/train/optim_fixture.json, written by
// tests/tools/make_optim_fixture.py), and closed forms for what those cannot express.
#include <QtTest>

#include <cmath>
#include <numbers>

#include <nlohmann/json.hpp>

#include "engine/train/lr_schedule.h"
#include "support/error_of.h"
#include "support/optim_fixture.h"

using nlohmann::json;

class TestLrSchedule : public QObject {
  Q_OBJECT

 private slots:
  void matches_reference_tables_data() {
    QTest::addColumn<int>("index");
    const json fx = load_optim_fixture();
    QVERIFY2(fx.contains("schedules"), "tests/data/train/optim_fixture.json missing");
    for (size_t i = 0; i < fx["schedules"].size(); ++i) {
      const json& s = fx["schedules"][i];
      QTest::newRow(QString("%1 warmup %2 min %3")
                        .arg(QString::fromStdString(s["kind"].get<std::string>()))
                        .arg(s["warmup"].get<int>())
                        .arg(s.value("min_lr_ratio", 0.0))
                        .toUtf8()
                        .constData())
          << int(i);
    }
  }
  void matches_reference_tables() {
    QFETCH(int, index);
    const json s = load_optim_fixture()["schedules"][size_t(index)];
    engine::LrSchedule sch;
    sch.kind = *engine::lr_schedule_from_name(s["kind"].get<std::string>());
    sch.base_lr = s["base_lr"].get<float>();
    sch.warmup_steps = s["warmup"].get<int>();
    sch.total_steps = s["total"].get<int>();
    sch.min_lr_ratio = s.value("min_lr_ratio", 0.0f);
    sch.step_size = s.value("step_size", 1);
    sch.gamma = s.value("gamma", 0.1f);
    sch.validate();
    const auto rates = s["rates"].get<std::vector<double>>();
    for (int step = 0; step < int(rates.size()); ++step) {
      const double ours = engine::lr_at(sch, step);
      if (step > sch.total_steps && sch.kind == engine::LrScheduleKind::Cosine) {
        // Deliberate difference: HF's cosine keeps turning after the last step and climbs back up;
        // ours holds the floor (a run that continues past its planned end should not warm up again).
        QCOMPARE(ours, double(float(sch.base_lr * sch.min_lr_ratio)));
        continue;
      }
      const double want = rates[size_t(step)];
      QVERIFY2(std::abs(ours - want) <= 1e-7 * std::abs(want) + 1e-12,
               qPrintable(
                   QString("step %1: ours %2, reference %3").arg(step).arg(ours, 0, 'g', 10).arg(want, 0, 'g', 10)));
    }
  }

  void warmup_then_step_decay() {
    // torch's StepLR has no warmup; ours counts the decay steps from the end of the warmup.
    engine::LrSchedule s;
    s.kind = engine::LrScheduleKind::Step;
    s.base_lr = 0.1f;
    s.warmup_steps = 4;
    s.step_size = 3;
    s.gamma = 0.5f;
    const double want[] = {0, 0.025, 0.05, 0.075, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025};
    for (int i = 0; i < 11; ++i) QCOMPARE(engine::lr_at(s, i), float(want[i]));
  }

  void linear_decay_to_a_floor() {
    engine::LrSchedule s;
    s.kind = engine::LrScheduleKind::Linear;
    s.base_lr = 1.0f;
    s.warmup_steps = 0;
    s.total_steps = 10;
    s.min_lr_ratio = 0.2f;
    for (int i = 0; i <= 14; ++i) {
      const double p = std::min(1.0, i / 10.0);
      QVERIFY(std::abs(engine::lr_at(s, i) - (0.2 + 0.8 * (1 - p))) < 1e-6);
    }
  }

  void cosine_is_symmetric_about_its_midpoint() {
    engine::LrSchedule s;
    s.kind = engine::LrScheduleKind::Cosine;
    s.base_lr = 2.0f;
    s.warmup_steps = 2;
    s.total_steps = 22;
    QCOMPARE(engine::lr_at(s, 2), 2.0f);
    QVERIFY(std::abs(engine::lr_at(s, 12) - 1.0f) < 1e-6);  // halfway: half the rate
    for (int d = 1; d < 10; ++d) QVERIFY(std::abs(engine::lr_at(s, 12 - d) + engine::lr_at(s, 12 + d) - 2.0f) < 1e-6);
    QCOMPARE(engine::lr_at(s, 22), 0.0f);
  }

  void names_and_validation() {
    QCOMPARE(*engine::lr_schedule_from_name("cosine"), engine::LrScheduleKind::Cosine);
    QVERIFY(!engine::lr_schedule_from_name("Cosine"));
    QVERIFY(!engine::lr_schedule_from_name(""));
    for (auto k : {engine::LrScheduleKind::Constant, engine::LrScheduleKind::Cosine, engine::LrScheduleKind::Linear,
                   engine::LrScheduleKind::Step})
      QCOMPARE(*engine::lr_schedule_from_name(engine::lr_schedule_name(k)), k);
    auto err = [](auto edit) {
      engine::LrSchedule s;
      edit(s);
      return error_of([&] { s.validate(); });
    };
    QVERIFY(err([](auto& s) { s.base_lr = -1; }).contains("learning rate"));
    QVERIFY(err([](auto& s) { s.base_lr = INFINITY; }).contains("learning rate"));
    QVERIFY(err([](auto& s) { s.warmup_steps = -1; }).contains("warmup"));
    QVERIFY(err([](auto& s) { s.total_steps = 0; }).contains("total steps"));
    QVERIFY(err([](auto& s) { s.min_lr_ratio = 1.5f; }).contains("minimum"));
    QVERIFY(err([](auto& s) { s.gamma = 0; }).contains("gamma"));
    QVERIFY(err([](auto&) {}).isEmpty());
  }
};

QTEST_APPLESS_MAIN(TestLrSchedule)
#include "test_lr_schedule.moc"
