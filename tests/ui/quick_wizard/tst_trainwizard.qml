// The fine-tuning wizard, walked through as a user would: read the base model, try a data file with a
// bad row (Next stays blocked and the bad line is shown), switch to a good file (format, counts and
// split), choose LoRA and measure the time, set hyper-parameters, go back and forth (everything
// entered stays), review the CLI command, start a tiny real run, wait for it, evaluate (loss before
// and after on the same validation split, base and tuned answers side by side) and export a GGUF.
// Enter is Next, Esc cancels. A second wizard walks the DPO path: preference pairs recognised, DPO
// picked among the recipes they allow, its beta set, the CLI command with --recipe dpo --beta, a real
// run, and the starting model against the trained one on the held-out pairs.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtTest
import Workbench.Ui
import WizardTest

Item {
    id: root
    width: 1100
    height: 1000
    // The app window's theme (Main.qml), so the screenshots look as the app does.
    Material.theme: Style.dark ? Material.Dark : Material.Light
    Material.accent: Style.accent
    Material.primary: Style.accent
    Material.background: Style.window
    Material.foreground: Style.text

    Rectangle { anchors.fill: parent; color: Style.window }

    RunListModel { id: runList; jobs: App.training }

    TrainWizard {
        id: wizard
        width: parent.width
        runs: runList
        onStartRequested: function(name, settings) {
            const id = App.training.enqueue(name, settings, "")
            if (id !== 0) wizard.startedRun(id)
        }
    }

    SignalSpy { id: cancelSpy; target: wizard; signalName: "cancelled" }

    // The alignment path, in its own wizard so the two walks do not depend on their order.
    TrainWizard {
        id: alignWizard
        visible: false
        width: parent.width
        runs: runList
        onStartRequested: function(name, settings) {
            const id = App.training.enqueue(name, settings, "")
            if (id !== 0) alignWizard.startedRun(id)
        }
    }

    TestCase {
        name: "TrainWizardDpo"
        when: windowShown

        function item(name) {
            const it = findChild(alignWizard, name)
            verify(it !== null, "no item " + name)
            return it
        }
        function press(name) {
            const it = item(name)
            verify(it.enabled, name + " is disabled")
            it.clicked()
        }
        function next() {
            verify(alignWizard.canNext, alignWizard.blocker)
            alignWizard.next()
        }
        // With WB_SCREENSHOT_DIR set, each step is saved in the light and the dark theme.
        function shot(name) {
            if (WizardFixture.screenshotDir.length === 0) return
            const theme = App.settings.theme
            for (const t of ["light", "dark"]) {
                App.settings.theme = t
                wait(300)
                grabImage(root).save(WizardFixture.screenshotDir + "/wizard-dpo-" + name + "-" + t + ".png")
            }
            App.settings.theme = theme
        }
        function waitIdle() { tryVerify(function() { return !alignWizard.service.busy }, 60000) }

        function test_dpo_path() {
            wizard.visible = false
            alignWizard.visible = true
            alignWizard.modelPath = WizardFixture.modelPath
            press("wizardReadModel")
            waitIdle()
            next()

            // Preference pairs: recognised, previewed, and they offer a reward model or DPO.
            alignWizard.dataPath = WizardFixture.pairsPath
            alignWizard.seq = 48
            alignWizard.inspectData()
            waitIdle()
            verify(alignWizard.datasetReady)
            compare(alignWizard.service.dataset.format, "pairs")
            compare(alignWizard.service.dataset.rows, 20)
            compare(alignWizard.service.dataset.valRows, 2)  // the default 10 % held out
            verify(alignWizard.service.dataset.preview[0].text.indexOf("chosen: cddc effe") >= 0,
                   alignWizard.service.dataset.preview[0].text)
            verify(item("wizardDataSummary").text.indexOf("preference pairs") === 0, item("wizardDataSummary").text)
            compare(alignWizard.recipeChoices, ["reward", "dpo"])
            shot("2-data")
            next()

            // Method: DPO, explained in a line.
            compare(alignWizard.step, 2)
            press("wizardRecipe_dpo")
            compare(alignWizard.recipe, "dpo")
            verify(findChild(alignWizard, "wizardRecipe_grpo") === null)
            shot("3-method")
            next()

            // Hyper-parameters: DPO's beta beside the usual ones; a non-number blocks Next.
            compare(alignWizard.step, 3)
            compare(item("wizardAlign_beta").text, "0.1")
            item("wizardSteps").value = 4
            item("wizardBatch").value = 2
            alignWizard.setAlignValue("beta", "x")
            verify(!alignWizard.canNext)
            alignWizard.setAlignValue("beta", "0.2")
            compare(item("wizardAlign_beta").text, "0.2")
            verify(alignWizard.canNext)
            shot("4-settings")
            next()

            // Review: the CLI command for the same run.
            compare(alignWizard.step, 4)
            const cli = item("wizardCli").text
            verify(cli.indexOf("llm-workbench-cli train --recipe dpo") === 0, cli)
            verify(cli.indexOf("--beta 0.2") > 0, cli)
            shot("5-review")

            // Start, wait for the run, then the starting model against the trained one.
            next()
            compare(alignWizard.step, 5)
            verify(alignWizard.runId !== 0)
            tryVerify(function() { return alignWizard.runStatus === "done" || alignWizard.runStatus === "failed" }, 120000)
            compare(alignWizard.runError, "")
            compare(alignWizard.runSettings.recipe, "dpo")
            next()
            compare(alignWizard.step, 6)
            compare(findChild(alignWizard, "wizardPrompt"), null)  // held-out pairs, not prompts to type
            press("wizardEvaluate")
            waitIdle()
            compare(alignWizard.service.error, "")
            const e = alignWizard.service.evaluation
            compare(e.kind, "alignment")
            compare(e.heldOut, 2)
            compare(e.measures.length, 3)
            verify(e.measures[0].after >= 0 && e.measures[0].after <= 1)
            verify(item("measureAfter").text.indexOf("%") > 0, item("measureAfter").text)
            compare(item("measureBefore").text, "—")  // the starting model has no implicit reward
            shot("7-evaluate")
            alignWizard.visible = false
            wizard.visible = true
        }

        // Prompts offer GRPO and PPO; PPO brings its reward choice, full fine-tuning only, its own settings and
        // the CLI's check that the minibatches divide the batch.
        function test_ppo_settings() {
            wizard.visible = false
            alignWizard.visible = true
            alignWizard.restart()
            alignWizard.modelPath = WizardFixture.modelPath
            press("wizardReadModel")
            waitIdle()
            next()
            alignWizard.dataPath = WizardFixture.promptsPath
            alignWizard.seq = 64
            alignWizard.inspectData()
            waitIdle()
            compare(alignWizard.service.dataset.format, "prompts")
            compare(alignWizard.recipeChoices, ["grpo", "ppo"])
            verify(alignWizard.service.dataset.preview[0].text.indexOf("answer: 2") >= 0, alignWizard.service.dataset.preview[0].text)
            next()
            press("wizardRecipe_ppo")
            compare(alignWizard.recipe, "ppo")
            verify(!alignWizard.lora)
            item("wizardLora").checked = true  // PPO and GRPO sample the adapted policy: LoRA applies
            verify(alignWizard.lora)
            press("wizardRewardModel")
            verify(!alignWizard.canNext)  // no reward model chosen yet
            press("wizardRewardBuiltin")
            verify(alignWizard.canNext, alignWizard.blocker)
            shot("ppo-3-method")
            next()
            compare(item("wizardAlign_kl_coef").text, "0.05")
            compare(item("wizardAlign_ppo_epochs").text, "4")
            verify(findChild(alignWizard, "wizardAlign_beta") === null)  // DPO's and GRPO's, not PPO's
            item("wizardBatch").value = 4
            alignWizard.setAlignValue("num_minibatches", "3")
            verify(!alignWizard.canNext)
            compare(item("wizardBlocker").text, "--num-minibatches 3 does not divide --batch 4")
            alignWizard.setAlignValue("num_minibatches", "2")
            verify(alignWizard.canNext, alignWizard.blocker)
            shot("ppo-4-settings")
            next()
            const cli = item("wizardCli").text
            verify(cli.indexOf("--recipe ppo") > 0, cli)
            verify(cli.indexOf("--num-minibatches 2") > 0, cli)
            verify(cli.indexOf("--lora-rank") > 0, cli)
            verify(cli.indexOf("--beta") < 0 && cli.indexOf("--reward-model") < 0, cli)
            alignWizard.visible = false
            wizard.visible = true
        }
    }

    TestCase {
        name: "TrainWizard"
        when: windowShown

        function item(name) {
            const it = findChild(wizard, name)
            verify(it !== null, "no item " + name)
            return it
        }
        // A button's click, as the user's would be: only when it is enabled.
        function press(name) {
            const it = item(name)
            verify(it.enabled, name + " is disabled")
            it.clicked()
        }
        function pressEnter() {
            wizard.forceActiveFocus()
            keyClick(Qt.Key_Return)
        }
        // With WB_SCREENSHOT_DIR set, each step is saved for a look.
        function shot(name) {
            if (WizardFixture.screenshotDir.length === 0) return
            wait(300)
            grabImage(root).save(WizardFixture.screenshotDir + "/wizard-" + name + ".png")
        }
        function waitIdle() { tryVerify(function() { return !wizard.service.busy }, 60000) }

        function test_walkthrough() {
            compare(wizard.step, 0)

            // 1. Base model: Next is blocked until the model has been read.
            wizard.modelPath = WizardFixture.modelPath
            verify(!wizard.canNext)
            pressEnter()
            compare(wizard.step, 0)
            press("wizardReadModel")
            waitIdle()
            verify(wizard.modelReady)
            compare(wizard.service.model.architecture, "GPT-2")
            compare(wizard.service.model.layers, 2)
            verify(item("wizardModelSummary").text.indexOf("GPT-2") >= 0)
            shot("1-model")
            pressEnter()
            compare(wizard.step, 1)

            // 2. Dataset: a bad row blocks Next, with its line shown.
            wizard.dataPath = WizardFixture.badDataPath
            wizard.seq = 16
            wizard.inspectData()
            waitIdle()
            verify(wizard.datasetInspected)
            compare(wizard.service.dataset.format, "messages")
            compare(wizard.service.dataset.badRows, 1)
            const problem = item("wizardProblem")
            verify(problem.text.indexOf("line 2") === 0, problem.text)
            verify(problem.text.indexOf("bad JSON") > 0, problem.text)
            verify(!wizard.canNext)
            verify(item("wizardBlocker").text.length > 0)
            shot("2-bad-data")
            pressEnter()
            compare(wizard.step, 1)

            // A good plain-text file: format, token counts and the split.
            wizard.dataPath = WizardFixture.dataPath
            verify(!wizard.datasetInspected)  // a new file must be checked again
            wizard.inspectData()
            waitIdle()
            verify(wizard.datasetReady)
            compare(wizard.service.dataset.format, "text")
            compare(wizard.service.dataset.rows, 40)
            verify(wizard.service.dataset.totalTokens > 100)
            compare(wizard.service.dataset.trainTokens + wizard.service.dataset.valTokens, wizard.service.dataset.totalTokens)
            verify(item("wizardSplit").text.indexOf("validation") > 0)
            shot("2-data")
            pressEnter()
            compare(wizard.step, 2)

            // 3. Method: LoRA, with a memory estimate and a measured time.
            item("wizardLora").checked = true
            verify(wizard.lora)
            verify(item("wizardMemory").text.indexOf("Memory") === 0)
            item("wizardBatch").value = 2
            press("wizardMeasure")
            waitIdle()
            compare(wizard.service.error, "")
            verify(wizard.service.timeEstimate.secondsPerStep > 0)
            verify(item("wizardTime").text.indexOf("Estimate") === 0)
            shot("3-method")
            pressEnter()
            compare(wizard.step, 3)

            // 4. Hyper-parameters: a bad learning rate blocks Next.
            item("wizardSteps").value = 4
            item("wizardBatch").value = 2
            item("wizardLr").text = "fast"
            verify(!wizard.canNext)
            item("wizardLr").text = "0.01"
            verify(wizard.canNext)
            shot("4-settings")

            // Back and forth: what was entered stays.
            press("wizardBack")
            compare(wizard.step, 2)
            press("wizardBack")
            compare(wizard.step, 1)
            compare(wizard.dataPath, WizardFixture.dataPath)
            compare(wizard.seq, 16)
            verify(wizard.datasetReady)
            pressEnter()
            verify(wizard.lora)
            pressEnter()
            compare(wizard.step, 3)
            compare(item("wizardSteps").value, 4)
            compare(item("wizardLr").text, "0.01")
            pressEnter()

            // 5. Review: the equivalent CLI command.
            compare(wizard.step, 4)
            const cli = item("wizardCli").text
            verify(cli.indexOf("llm-workbench-cli train --recipe pretrain") === 0, cli)
            verify(cli.indexOf("--lora-rank") > 0, cli)
            verify(cli.indexOf("--steps 4") > 0, cli)
            shot("5-review")

            // 6. Run: Next starts it; Next waits for the end.
            pressEnter()
            compare(wizard.step, 5)
            verify(wizard.runId !== 0)
            verify(!wizard.canBack)
            tryVerify(function() { return wizard.runStatus === "done" || wizard.runStatus === "failed" }, 120000)
            compare(wizard.runError, "")
            compare(wizard.runStatus, "done")
            shot("6-run")
            verify(wizard.runDir.length > 0)
            pressEnter()

            // 7. Evaluate: three default prompts, loss before and after, answers side by side.
            compare(wizard.step, 6)
            tryVerify(function() { return findChild(wizard, "wizardPrompt") !== null })
            press("wizardEvaluate")
            waitIdle()
            compare(wizard.service.error, "")
            const e = wizard.service.evaluation
            verify(isFinite(e.before.loss) && e.before.loss > 0)
            verify(isFinite(e.after.loss) && e.after.loss > 0)
            verify(e.before.loss !== e.after.loss)
            compare(e.before.positions, e.after.positions)  // the same validation split
            compare(e.answers.length, 3)
            verify(item("wizardPerplexity").text.indexOf("→") > 0)
            shot("7-evaluate")
            pressEnter()

            // 8. Export: a GGUF of the merged model.
            compare(wizard.step, 7)
            item("wizardExportKind").currentIndex = 2
            item("wizardExportPath").text = WizardFixture.exportDir + "/tuned.gguf"
            press("wizardExport")
            waitIdle()
            compare(wizard.service.error, "")
            verify(wizard.service.exported.indexOf("GGUF") === 0, wizard.service.exported)
            shot("8-export")

            // Esc: the wizard asks to close.
            wizard.forceActiveFocus()
            keyClick(Qt.Key_Escape)
            compare(cancelSpy.count, 1)
        }
    }
}
