"""The offline reference policy: a deterministic stand-in for the VLM backbone.

:class:`ReferencePolicy` is a ``messages -> str`` function; wrapped as ``Scripted(ReferencePolicy(...))``
it drives :func:`~.loop.run_episode` like any chat model. It is a *mechanism demonstrator*: it knows one
reasonable way to answer each of the nine question families, and what it achieves in each interface follows
only from what that interface lets it see and compose.

What it reads. Only the conversation: the question and options of the first user message (or of the
planner's prompt), and the printed feedback of earlier steps. Never the scene's ground truth, except
through ``eyes``: the backbone's own weak vision, ``eyes.ask_with_thinking(images, question)`` (the same 2-D
heuristic as the kernel's ``vlm``). The reply is a pure function of the messages (nothing is kept between
calls): the same conversation gets the same reply.

Per interface:

* ``code`` (SpatialClaw): one cell per step. Step 1 reconstructs the frames, segments every mentioned
  object by its text and prints ``SEG|name|count`` and one ``PART|name|k|x|y|z|frames`` line per object
  found (robust 3-D centre over frames). If a name found nothing (a synonym outside SAM3's lexicon, or a
  dropped instance) the next cell grounds it with ``vlm.locate`` on ≤ 8 frames at a time and segments by
  the located point. Then a cell merges the parts of a split object (parts within :data:`MERGE_M`),
  computes the answer with NumPy, cross-checks it on the two halves of the frames (``CHECK|...``) and prints
  ``CANDIDATE|value``; the last step is ``ReturnAnswer`` of the value read from that line. The functions
  these cells define are written out from :mod:`~.policy_helpers` (their source text). The only utility
  wrapper this path calls converts the grounding model's 0–1000 coordinates to pixels; when the kernel
  reports the wrappers removed (the ablation), the next cell repeats the failed one with the conversion
  written out. Camera families
  need no objects: step 1 computes from the reconstructed poses and cross-checks with a second
  reconstruction of the two frames alone. Counting clusters the footprints of every detection (one video
  call and one call per view) in 3-D, so split parts and an instance dropped by one call are handled.
  The policy reads the step budget the system prompt announces: given one step, it writes the
  single-pass program below (with more, it takes the path above however few steps remain).
* ``single_pass``: the same default path as one program written before any feedback: segment by text, take
  object 0, no recovery, no merging, no cross-check, compute and ``ReturnAnswer``. When a name finds nothing
  the cell raises, and the loop force-terminates the episode (no-tool answer).
* ``tool_call``: one JSON call per step. It chains what the tools express without arithmetic: segment →
  reconstruct → ``tools.Geometry.euclidean_distance`` of two ``result_k.get_centroid_3d(...)`` (distance;
  three of them and the smallest printed value for "closest"), and of two ``extrinsics[i][:3, 3]`` (camera
  travel). Reading printed numbers and comparing them in text is allowed (an LLM does that); doing vector
  arithmetic in its head is not, by design: relative direction, object perspective, camera motion, mover
  direction, size (needs extents) and counting (needs dedup across views) go to ``vlm.ask_with_thinking``
  with the question itself (neutral: it holds no conclusion), its answer mapped onto an option. The loop
  echoes each result's repr into the feedback (an LLM would read it); this policy does not parse those
  reprs: it learns that a mask is empty or a frame does not show an object from the error of the call
  that uses it, and then retries (another frame; ``vlm.locate`` → ``normalized_to_pixel`` → point prompt
  for an empty mask).
* ``no_tool`` and forced termination (the system prompt asks for ``\\boxed{}``): the eyes' answer mapped onto
  an option or a number; without eyes, or when the eyes cannot tell, a fixed prior: the first option, 2.0 m
  for a length, 2 for a count.

Unknown question text is answered the same way (eyes, else the prior), and the reply says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from neurips26.llm.messages import Message
from neurips26.llm.offline import Scripted
from neurips26.spatialclaw import policy_helpers as ph
from neurips26.spatialclaw.parser import format_response, parse_response
from neurips26.spatialclaw.prompts import INTERFACES
from neurips26.spatialclaw.scene_types import CATEGORIES
from neurips26.spatialclaw.scoring import parse_number
from neurips26.spatialclaw.tools.lexicon import COLOURS, find_mentions
from neurips26.validation import check_choice

#: Parts of one name whose 3-D centres lie within this many metres are one (split) object.
MERGE_M = 0.6
#: Fallback answers when neither tools nor eyes decide (documented priors).
PRIOR_LENGTH_M = 2.0
PRIOR_COUNT = 2
#: Footprints of two detections closer than this (metres) are the same object when counting.
COUNT_GAP_M = 0.1
_SCREEN_WORDS = ("tv", "television", "monitor")
_PLAN_MARK = "You plan, you do not answer"


# --- parsing the question --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedQuestion:
    """A question read back from its text: ``family`` (``"unknown"`` if no template matches), the object
    ``mentions`` as written (colour + word, the word possibly a synonym; for counting the counted word),
    the ``frames`` it names, the ``options`` offered, and family details in ``detail`` (``"taller"`` /
    ``"longer"``, ``"move"`` / ``"turn"``, ``"category"`` / ``"colour"``)."""

    family: str
    text: str
    mentions: tuple[str, ...] = ()
    frames: tuple[int, ...] = ()
    options: tuple[str, ...] = ()
    detail: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical names (``"<colour> <category>"``; for counting the category or colour), as
        ``Question.names`` holds them."""
        if self.family == "counting":
            return (self.mentions[0] if self.detail == "colour" else canonical_word(self.mentions[0]),)
        return tuple(canonical_name(m) for m in self.mentions)


def canonical_word(word: str) -> str:
    """The category a (possibly plural) word names: ``"couches"`` → ``"sofa"``; the word itself if it
    names none."""
    found = find_mentions(word)
    return found[0][1] if found else word


def canonical_name(mention: str) -> str:
    """``"red couch"`` → ``"red sofa"`` (through :data:`~.scene_types.SYNONYMS`)."""
    found = find_mentions(mention)
    if not found:
        return mention
    colour, category = found[0]
    return f"{colour} {category}" if colour else category


_OBJ = r"(.+?)"
_TEMPLATES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("distance", re.compile(rf"What is the distance between the {_OBJ} and the {_OBJ} \(centre to centre")),
    (
        "relative_direction",
        re.compile(rf"If I stand at the {_OBJ} facing the {_OBJ}, is the {_OBJ} to my front-left"),
    ),
    (
        "object_perspective",
        re.compile(rf"From the {_OBJ}'s point of view \(facing where it faces\), is the {_OBJ} on"),
    ),
    ("counting", re.compile(r"How many (.+?) are in the room\?")),
    ("size_comparison", re.compile(rf"Which is (taller|longer)[^,]*, the {_OBJ} or the {_OBJ}\?")),
    (
        "closest",
        re.compile(rf"Which object is closest to the {_OBJ}: the {_OBJ}, the {_OBJ} or the {_OBJ}\?"),
    ),
    ("camera_motion", re.compile(r"Between frame (\d+) and frame (\d+), did the camera (move|turn)")),
    (
        "mover_direction",
        re.compile(rf"In which direction did the moving {_OBJ} move, as seen from the first"),
    ),
    ("camera_distance", re.compile(r"How far did the camera travel between frame (\d+) and frame (\d+)")),
)


def split_user_message(text: str) -> tuple[str, tuple[str, ...]]:
    """The question and the options of a first user message (``prompts.user_message``, possibly with a
    plan appended) or of a planner prompt."""
    if "Question: " in text and _PLAN_MARK in text:
        text = text.split("Question: ", 1)[1].split("\n\n", 1)[0]
    text = text.split("\n\nPlan:\n", 1)[0]
    if "\nOptions:\n" not in text:
        return text.strip(), ()
    question, rest = text.split("\nOptions:\n", 1)
    options = tuple(m.group(1).strip() for m in re.finditer(r"^[A-Z]\. (.+)$", rest, re.MULTILINE))
    return question.strip(), options


def parse_question(text: str, options: Sequence[str] = ()) -> ParsedQuestion:
    """Read the family, mentions and frames of one of the nine question templates (module docstring)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    options = tuple(options)
    for family, pattern in _TEMPLATES:
        m = pattern.search(text)
        if m is None:
            continue
        groups = m.groups()
        if family in ("camera_motion", "camera_distance"):
            detail = groups[2] if family == "camera_motion" else ""
            return ParsedQuestion(family, text, (), (int(groups[0]), int(groups[1])), options, detail)
        if family == "size_comparison":
            return ParsedQuestion(family, text, groups[1:], (), options, groups[0])
        if family == "counting":
            word = groups[0]
            colour = word.removesuffix(" objects")
            if word.endswith(" objects") and colour in COLOURS:
                return ParsedQuestion(family, text, (colour,), (), options, "colour")
            return ParsedQuestion(family, text, (word,), (), options, "category")
        return ParsedQuestion(family, text, tuple(groups), (), options)
    return ParsedQuestion("unknown", text, (), (), options)


# --- mapping free text onto an answer ----------------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def map_to_option(text: str, options: Sequence[str]) -> str | None:
    """The option ``text`` names: an exact or contained option text, else the option naming the same
    object (synonyms allowed), else the option sharing the most words; ``None`` if nothing fits."""
    if not options:
        return None
    said = _norm(text)
    normed = [_norm(o) for o in options]
    if said in normed:
        return options[normed.index(said)]
    inside = [o for o, n in zip(options, normed, strict=True) if re.search(rf"\b{re.escape(n)}\b", said)]
    if inside:
        return max(inside, key=len)  # "front-left" over "left"
    objects = [canonical_name(o) for o in options]
    said_object = canonical_name(text)
    if said_object in objects and find_mentions(text):
        return options[objects.index(said_object)]
    overlap = [len(set(said.split()) & set(n.split())) for n in normed]
    best = max(overlap)
    return options[overlap.index(best)] if best > 0 else None


def eyes_answer(reply: str, parsed: ParsedQuestion) -> str | float | None:
    """The answer the eyes' reply (``"... Answer: X"``) gives for ``parsed``, or ``None`` when it cannot
    tell."""
    if "Answer:" not in reply:
        return None
    said = reply.rsplit("Answer:", 1)[1].strip()
    if parsed.options:
        return map_to_option(said, parsed.options)
    return parse_number(said)


def prior_answer(parsed: ParsedQuestion) -> str | float:
    """The fixed prior: the first option, :data:`PRIOR_COUNT` for a count, :data:`PRIOR_LENGTH_M` for
    any other number."""
    if parsed.options:
        return parsed.options[0]
    return float(PRIOR_COUNT) if parsed.family == "counting" else PRIOR_LENGTH_M


# --- the kernel-side code the code interfaces write ---------------------------------------------------------

#: The first lines of every code cell: the reconstruction, the frame size, the helper functions of
#: :mod:`~.policy_helpers` (their source text) and an empty ``seg``.
_HELPERS = (
    "\nrecon = tools.Reconstruct.Reconstruct(InputImages)\nH, W = InputImages[0].array.shape[:2]\n\n\n"
    + ph.cell_sources(ph.object_points, ph.pooled, ph.footprint, ph.centre, ph.right_of, ph.report)
    + "\n\nseg = {}\n"
)

#: What the kernel says when a removed utility wrapper is used (the "no utility wrappers" ablation).
_NO_WRAPPERS = "write it with NumPy/SciPy"
#: The one wrapper call the code path makes, and the same conversion written out.
_WRAPPED_PIXEL = "tools.Geometry.normalized_to_pixel(xy, W, H)"
_NUMPY_PIXEL = "(xy[0] * W / 1000.0, xy[1] * H / 1000.0)"

_RECOVER = """
for name in {names!r}:
    found = None
    for start in range(0, len(InputImages), 8):
        where = vlm.locate(InputImages[start:start + 8], name)
        print(f"LOCATE|{{name}}|{{start}}|{{where}}")
        for pos, xy in enumerate(where):
            if found is None and not isinstance(xy, str):
                found = (start + pos, {to_pixel})
        if found is not None:
            break
    if found is not None:
        seg[name] = tools.SAM3.segment_video_by_points(
            InputImages, [list(found[1])], label=name, prompt_frame_idx=found[0]
        )
    report(name)
"""

_CAMERA = "\n" + ph.cell_sources(ph.motion, ph.label)

#: Per object family, the functions of its compute cell ending with ``answer(frames)``.
_FAMILY_CODE: dict[str, str] = {
    "distance": "\n" + ph.cell_source(ph.answer_distance, "answer"),
    "relative_direction": "\n" + ph.cell_source(ph.answer_relative_direction, "answer"),
    "object_perspective": "\n"
    + ph.cell_source(ph.facing)
    + "\n\n"
    + ph.cell_source(ph.answer_object_perspective, "answer"),
    "size_comparison": "\n"
    + ph.cell_source(ph.measure)
    + "\n\n"
    + ph.cell_source(ph.answer_size_comparison, "answer"),
    "closest": "\n" + ph.cell_source(ph.answer_closest, "answer"),
    "mover_direction": "\n" + ph.cell_source(ph.answer_mover_direction, "answer"),
}

_COUNT = "\n" + ph.cell_sources(ph.footprint_box, ph.count_clusters)


def _lines(text: str, tag: str) -> list[list[str]]:
    """The ``tag|a|b|...`` marker lines of ``text``, split on ``|`` (without the tag)."""
    return [line.split("|")[1:] for line in text.splitlines() if line.startswith(tag + "|")]


# --- the policy ------------------------------------------------------------------------------------------


class _Emit(Exception):
    """Raised by :class:`_Replay` when the tool-call program reaches a call not yet made."""

    def __init__(self, call: dict[str, object]) -> None:
        super().__init__(call.get("tool"))
        self.call = call


class _Replay:
    """Replays a tool-call program against the history: each call returns the recorded outcome (ok,
    feedback, result variable) of the step it was, or stops the program by emitting the next call."""

    def __init__(self, history: list[tuple[bool, str]]) -> None:
        self.history, self.step = history, 0

    def __call__(self, tool: str, **args: object) -> tuple[bool, str, str]:
        self.step += 1
        if self.step > len(self.history):
            raise _Emit({"tool": tool, "args": args})
        ok, feedback = self.history[self.step - 1]
        return ok, feedback, f"result_{self.step}"


class ReferencePolicy:
    """The deterministic offline policy (module docstring) for ``interface`` (``code``, ``single_pass``,
    ``tool_call`` or ``no_tool``). ``eyes`` is a :class:`~.tools.vlm.VLM` answering from ``images`` (the
    sample's ``InputImages``); both or neither must be given."""

    def __init__(self, interface: str, *, eyes: object | None = None, images: object | None = None) -> None:
        self.interface = check_choice("interface", interface, INTERFACES)
        if (eyes is None) != (images is None):
            raise ValueError("eyes and images must be given together (images: the sample's InputImages)")
        if eyes is not None and not callable(getattr(eyes, "ask_with_thinking", None)):
            raise TypeError(f"eyes must have an ask_with_thinking(images, question) method; got {eyes!r}")
        self.eyes, self.images = eyes, images

    def __repr__(self) -> str:
        return f"ReferencePolicy({self.interface!r}, eyes={'yes' if self.eyes is not None else 'no'})"

    # --- entry ---------------------------------------------------------------------------------------

    def __call__(self, messages: Sequence[Message]) -> str:
        if not messages:
            raise ValueError("messages must not be empty")
        if _PLAN_MARK in messages[-1].content:
            question, options = split_user_message(messages[-1].content)
            return self._plan(parse_question(question, options))
        first = next((m for m in messages if m.role == "user"), None)
        if first is None:
            raise ValueError("messages must hold a user message with the question")
        question, options = split_user_message(first.content)
        parsed = parse_question(question, options)
        system = messages[0].content if messages[0].role == "system" else ""
        if self.interface == "no_tool" or "\\boxed" in system:
            return self._boxed(parsed)
        start = list(messages).index(first)
        replies = [m.content for m in messages[start + 1 :] if m.role == "assistant"]
        feedback = [m.content for m in messages[start + 1 :] if m.role == "user"]
        if self.interface == "tool_call":
            frames = re.search(r"of (\d+) frames", system)
            return self._tool_call(parsed, feedback, int(frames.group(1)) if frames else 16)
        budget = re.search(r"Budget: (\d+) steps?\.", system)
        if self.interface == "single_pass" or (budget is not None and int(budget.group(1)) == 1):
            return self._single_pass(parsed)  # one step announced: everything goes into one program
        return self._code(parsed, feedback, replies)

    # --- eyes and priors -----------------------------------------------------------------------------

    def _look(self, parsed: ParsedQuestion) -> tuple[str | float, str]:
        """The eyes' answer, or the prior; and a sentence saying which."""
        if self.eyes is not None:
            reply = self.eyes.ask_with_thinking(self.images, parsed.text)  # type: ignore[attr-defined]
            said = eyes_answer(reply, parsed)
            if said is not None:
                return said, f"From the images: {reply}"
            why = f"The images do not decide it ({reply})"
        else:
            why = "I cannot look at the images"
        return prior_answer(parsed), f"{why}, so I fall back on the prior answer."

    def _boxed(self, parsed: ParsedQuestion) -> str:
        answer, why = self._look(parsed)
        unknown = "I do not recognise this kind of question. " if parsed.family == "unknown" else ""
        text = f"{answer:g}" if isinstance(answer, float) else answer
        return f"{unknown}{why}\n\\boxed{{{text}}}"

    def _plan(self, parsed: ParsedQuestion) -> str:
        steps = {
            "camera_motion": "read the two camera poses; express the motion in the first camera's heading",
            "camera_distance": "read the two camera positions; take the norm of their difference",
            "counting": "detect every instance in every view; deduplicate in 3-D",
        }.get(parsed.family, "segment each named object; lift it to 3-D; compute the geometry in metres")
        items = [
            {"priority": "HIGH", "description": "check every segmentation found the object (num_objects)"},
            {"priority": "HIGH", "description": steps},
            {"priority": "MEDIUM", "description": "cross-check on a second set of frames"},
            {"priority": "LOW", "description": "answer with the option text or a number in metres"},
        ]
        return (
            f"Task: a {parsed.family.replace('_', ' ')} question; frame of reference: "
            f"{'camera' if parsed.family.startswith('camera') else 'world / object-centred'}.\n"
            f"Objects: {', '.join(parsed.mentions) or 'none'}. Frames: {list(parsed.frames) or 'all'}.\n"
            f"Plan: {steps}.\n\n### CHECKLIST\n{json.dumps(items)}"
        )

    # --- code and single pass ------------------------------------------------------------------------

    def _answer_cell(self, value: str | float, why: str) -> str:
        return format_response("answer", why, "submit the answer", f"ReturnAnswer({value!r})")

    def _compute_code(self, parsed: ParsedQuestion, parts: dict[str, list[int]], cross_check: bool) -> str:
        """The cell body computing the answer from ``seg`` (with ``parts`` per name) and printing it."""
        family = parsed.family
        header = f"N = {list(parsed.mentions)!r}\nparts = {parts!r}\n"
        if family == "object_perspective":
            screen = parsed.mentions[0].split()[-1] in _SCREEN_WORDS
            header += f"SCREEN = {screen}\n"
        if family == "size_comparison":
            header += f"MEASURE = {parsed.detail!r}\n"
        header += "\n\n" + ph.cell_source(ph.C)
        body = header + _FAMILY_CODE[family]
        if cross_check:
            body += (
                "\n\nfi = InputImages.frame_indices\n"
                "for half, frames in (('first', fi[: len(fi) // 2]), ('second', fi[len(fi) // 2 :])):\n"
                "    try:\n"
                "        print(f'CHECK|{half} half|{answer(frames)}')\n"
                "    except (ValueError, IndexError, np.linalg.LinAlgError) as err:\n"
                "        print(f'CHECK|{half} half|failed: {err}')\n"
            )
        return body + "\ncandidate = answer(None)\nprint(f'CANDIDATE|{candidate}')\n"

    def _camera_code(self, parsed: ParsedQuestion, cross_check: bool) -> str:
        i, j = parsed.frames
        kind = parsed.detail or "distance"
        code = _CAMERA + f"\nm = motion(recon, {i}, {j})\nprint(f'MOTION|all frames|{{np.round(m, 3)}}')\n"
        if cross_check:
            code += (
                f"pair = tools.Reconstruct.Reconstruct([InputImages[{i}], InputImages[{j}]])\n"
                f"m2 = motion(pair, {i}, {j})\n"
                f"print(f'MOTION|frames {i} and {j} alone|{{np.round(m2, 3)}}')\n"
                "m = (m + m2) / 2\n"
            )
        if kind == "distance":
            return code + "candidate = float(m[3])\nprint(f'CANDIDATE|{candidate}')\n"
        return code + f"candidate = label(m, {kind!r})\nprint(f'CANDIDATE|{{candidate}}')\n"

    def _count_prompts(self, parsed: ParsedQuestion) -> list[str]:
        if parsed.detail == "colour":
            return [f"{parsed.mentions[0]} {category}" for category in CATEGORIES]
        return [parsed.mentions[0]]

    def _count_code(self, parsed: ParsedQuestion) -> str:
        prompts = self._count_prompts(parsed)
        return (
            _COUNT
            + f"COUNT_GAP = {COUNT_GAP_M}\nboxes = []\n"
            + f"for prompt in {prompts!r}:\n"
            + "    video = tools.SAM3.segment_video_by_text(InputImages, prompt)\n"
            + "    views = [tools.SAM3.segment_image_by_text(image, prompt) for image in InputImages]\n"
            + "    found = [video.num_objects] + [v.num_objects for v in views]\n"
            + "    print(f'SEG|{prompt}|{max(found)}')\n"
            + "    for mask in [video, *views]:\n"
            + "        boxes += [b for b in (footprint_box(mask, k) for k in range(mask.num_objects)) if b]\n"
            + "print(f'DETECTIONS|{len(boxes)}')\n"
            + (
                "if boxes:\n    print(f'CANDIDATE|{count_clusters(boxes)}')\n"
                if parsed.detail == "category"
                else "print(f'CANDIDATE|{count_clusters(boxes)}')\n"
            )
        )

    def _count_recover_code(self, parsed: ParsedQuestion) -> str:
        word = parsed.mentions[0]
        return (
            f"boxes = []\nfor start in range(0, len(InputImages), 8):\n"
            f"    where = vlm.locate(InputImages[start:start + 8], {word!r})\n"
            "    print(f'LOCATE|{start}|{where}')\n"
            "    for pos, xy in enumerate(where):\n"
            "        if not isinstance(xy, str):\n"
            f"            pix = {_WRAPPED_PIXEL}\n"
            "            mask = tools.SAM3.segment_image_by_points(InputImages[start + pos], [list(pix)])\n"
            "            box = footprint_box(mask, 0)\n"
            "            if box:\n"
            "                boxes.append(box)\n"
            "print(f'CANDIDATE|{count_clusters(boxes)}')\n"
        )

    def _single_pass(self, parsed: ParsedQuestion) -> str:
        """One program, written before any feedback: the default path without recovery or checks."""
        if parsed.family == "unknown":
            answer, why = self._look(parsed)
            return self._answer_cell(answer, f"I do not recognise this kind of question. {why}")
        code = _HELPERS
        if parsed.family in ("camera_motion", "camera_distance"):
            code += self._camera_code(parsed, cross_check=False)
        elif parsed.family == "counting":
            prompts = self._count_prompts(parsed)
            code += (
                f"candidate = sum(tools.SAM3.segment_video_by_text(InputImages, p).num_objects "
                f"for p in {prompts!r})\n"
            )
        else:
            for name in parsed.mentions:
                code += f"seg[{name!r}] = tools.SAM3.segment_video_by_text(InputImages, {name!r})\n"
            code += self._compute_code(parsed, {n: [0] for n in parsed.mentions}, cross_check=False)
        code += self._return_code(parsed)
        return format_response(
            "answer in one program",
            "single-turn mode: everything must happen in this one program",
            "segment, reconstruct, compute and return the answer",
            code,
        )

    def _return_code(self, parsed: ParsedQuestion) -> str:
        """The program's last line: submit ``candidate`` (for multiple choice it is already an option's
        text: a direction, or an object as the question wrote it)."""
        if parsed.options:
            return "ReturnAnswer(str(candidate))\n"
        return "ReturnAnswer(float(candidate))\n"

    def _code(self, parsed: ParsedQuestion, feedback: list[str], replies: list[str]) -> str:
        """One cell per step; the stage follows from the markers printed so far (module docstring)."""
        step = len(replies)
        seen = "\n".join(feedback)
        if feedback and _NO_WRAPPERS in feedback[-1]:
            previous = parse_response(replies[-1]).code
            rewritten = previous.replace(_WRAPPED_PIXEL, _NUMPY_PIXEL)
            if rewritten != previous:
                return format_response(
                    "redo the last cell without the wrapper",
                    "the utility wrappers are not in this kernel; the conversion is one line of arithmetic",
                    "the same cell with the 0-1000 to pixel conversion written out",
                    rewritten,
                )
        candidates = _lines(seen, "CANDIDATE")
        if candidates:
            value = candidates[-1][0].strip()
            if parsed.options:
                answer: str | float | None = map_to_option(value, parsed.options)
            else:
                answer = parse_number(value)
            if answer is not None:
                return self._answer_cell(answer, f"the computation printed CANDIDATE {value}")
        if parsed.family == "unknown":
            answer, why = self._look(parsed)
            return self._answer_cell(answer, f"I do not recognise this kind of question. {why}")
        if step == 0:
            return self._first_cell(parsed)
        counts = {name: int(n) for name, n in _lines(seen, "SEG")}  # the latest count per name
        failed = bool(feedback) and "the cell ran" not in feedback[-1]
        recovered = "LOCATE|" in seen
        if failed or (recovered and (parsed.family == "counting" or 0 in counts.values())):
            answer, why = self._look(parsed)
            return self._answer_cell(answer, f"the tools did not settle it. {why}")
        if parsed.family == "counting":
            return format_response(
                "recover the count",
                f"the segmenter found no {parsed.mentions[0]!r} in any view: a word outside its lexicon?",
                "ground the object with vlm.locate in every view, prompt SAM3 with the points, count in 3-D",
                self._count_recover_code(parsed),
            )
        empty = [n for n in parsed.mentions if counts.get(n, 0) == 0]
        if empty:
            return format_response(
                "recover empty segmentations",
                f"SAM3 found nothing for {empty}: a word outside its lexicon or a missed instance",
                "locate each with the grounding model and segment by the located point",
                _RECOVER.format(names=empty, to_pixel=_WRAPPED_PIXEL),
            )
        parts: dict[str, list[int]] = {}
        centres: dict[str, dict[int, tuple[float, ...]]] = {}
        for name, k, x, y, z, _ in _lines(seen, "PART"):
            centres.setdefault(name, {})[int(k)] = (float(x), float(y), float(z))
        for name in parsed.mentions:
            found = centres.get(name, {})
            if not found:
                parts[name] = [0]
                continue
            base = found[min(found)]
            parts[name] = [
                k
                for k in sorted(found)
                if sum((a - b) ** 2 for a, b in zip(found[k], base, strict=True)) ** 0.5 <= MERGE_M
            ]
        merged = {n: p for n, p in parts.items() if len(p) > 1}
        why = (
            f"every object was found; merging the split parts {merged}"
            if merged
            else "every object was found"
        )
        return format_response(
            "compute the answer",
            why,
            "compute from robust 3-D centres, cross-check on two halves of the frames, print CANDIDATE",
            self._compute_code(parsed, parts, cross_check=True),
        )

    def _first_cell(self, parsed: ParsedQuestion) -> str:
        code = _HELPERS
        if parsed.family in ("camera_motion", "camera_distance"):
            code += self._camera_code(parsed, cross_check=True)
            goal = "camera poses of the two frames, from all frames and from the two frames alone"
        elif parsed.family == "counting":
            code += self._count_code(parsed)
            goal = "every detection in the video and in each view, deduplicated in 3-D"
        else:
            for name in parsed.mentions:
                code += f"seg[{name!r}] = tools.SAM3.segment_video_by_text(InputImages, {name!r})\n"
                code += f"report({name!r})\n"
            goal = "a mask and a 3-D centre for every named object"
        return format_response(
            "perceive",
            f"{'an' if parsed.family[0] in 'aeiou' else 'a'} {parsed.family.replace('_', ' ')} question; "
            "I need metric 3-D evidence first",
            goal,
            code,
        )

    # --- tool calls ----------------------------------------------------------------------------------

    def _tool_call(self, parsed: ParsedQuestion, feedback: list[str], num_frames: int) -> str:
        history = [("the cell ran" in fb, fb) for fb in feedback]
        call = _Replay(history)
        try:
            answer, why = self._tool_program(parsed, call, num_frames)
        except _Emit as emit:
            return f"**Reasoning**: next tool call.\n```json\n{json.dumps(emit.call)}\n```"
        return (
            f"**Reasoning**: {why}\n```json\n"
            + json.dumps({"tool": "ReturnAnswer", "args": {"x": repr(answer)}})
            + "\n```"
        )

    def _tool_program(
        self, parsed: ParsedQuestion, call: Callable[..., tuple[bool, str, str]], num_frames: int
    ) -> tuple[str | float, str]:
        """The tool-call plan, replayed against the history; returns the answer and why. ``num_frames``
        comes from the system prompt's session section."""
        family = parsed.family
        if family == "camera_distance":
            i, j = parsed.frames
            ok, fb, _ = call("tools.Reconstruct.Reconstruct", frames="InputImages")
            ok, fb, _ = call(
                "tools.Geometry.euclidean_distance",
                p1=f"result_1.extrinsics[{i}][:3, 3]",
                p2=f"result_1.extrinsics[{j}][:3, 3]",
            )
            value = _printed_float(fb) if ok else None
            if value is not None:
                return value, f"the distance between the two camera positions is {value:.3f}"
        elif family in ("distance", "closest"):
            masks, size = {}, (96, 128)
            for name in parsed.mentions:
                _, fb, masks[name] = call(
                    "tools.SAM3.segment_video_by_text", images="InputImages", prompt=repr(name)
                )
                shape = re.search(r"shape \((\d+), (\d+)\)", fb)
                size = (int(shape.group(1)), int(shape.group(2))) if shape else size
            ok, fb, recon = call("tools.Reconstruct.Reconstruct", frames="InputImages")
            anchor = parsed.mentions[0]
            dists = {}
            for other in parsed.mentions[1:]:
                value = self._tool_distance(masks, anchor, other, recon, call, num_frames, size)
                if value is None:
                    break
                dists[other] = value
            else:
                if family == "distance":
                    value = dists[parsed.mentions[1]]
                    return value, f"the printed distance is {value:.3f}"
                best = min(dists, key=dists.get)  # comparing printed numbers, not computing
                return map_to_option(
                    best, parsed.options
                ) or best, f"the smallest printed distance is {best}'s"
        else:
            ok, fb, _ = call("vlm.ask_with_thinking", images="InputImages", question=repr(parsed.text))
            reply = _printed_str(fb) if ok else ""
            said = eyes_answer(reply, parsed) if reply else None
            if said is not None:
                return said, f"the visual reasoner said: {reply}"
        return prior_answer(parsed), "the tools did not decide it; I answer with the prior"

    def _tool_distance(
        self,
        masks: dict[str, str],
        a: str,
        b: str,
        recon: str,
        call: Callable[..., tuple[bool, str, str]],
        num_frames: int,
        size: tuple[int, int],
    ) -> float | None:
        """euclidean_distance of the two objects' centroids, retrying other frames when a centroid is NaN
        and recovering an empty mask through vlm.locate; None when the budget of retries is spent."""
        frames = {a: 0, b: 0}
        n = num_frames
        order = list(dict.fromkeys([n // 2, n // 4, 3 * n // 4, 0, n - 1, *range(n)]))
        for _ in range(8):
            fa, fb_ = order[frames[a] % len(order)], order[frames[b] % len(order)]
            ok, fb, _ = call(
                "tools.Geometry.euclidean_distance",
                p1=f"{masks[a]}.get_centroid_3d({recon}, {fa})",
                p2=f"{masks[b]}.get_centroid_3d({recon}, {fb_})",
            )
            value = _printed_float(fb) if ok else None
            if value is not None:
                return value
            if ok:  # a NaN distance: one object is not seen in its frame; move both to other frames
                frames[a] += 1
                frames[b] += 1
            elif "p1 must be finite" in fb:
                frames[a] += 1
            elif "p2 must be finite" in fb:
                frames[b] += 1
            elif "num_objects is 0" in fb:
                # which one is empty? probe the first; then recover the empty one by a located point
                ok_a, fb_a, _ = call("tools.Mask.area", mask=f"{masks[a]}.get_mask({fa}, 0)")
                empty = a if not ok_a and "num_objects is 0" in fb_a else b
                masks[empty] = self._tool_recover(empty, call, min(n, 8), size)
            else:
                return None
        return None

    def _tool_recover(
        self, name: str, call: Callable[..., tuple[bool, str, str]], count: int, size: tuple[int, int]
    ) -> str:
        """``vlm.locate`` on the first ``count`` frames, then the first located point (an error says
        "Not visible") → pixels → a point prompt; ``size`` is (H, W) read from a mask summary."""
        ok, fb, located = call("vlm.locate", images=f"InputImages[0:{count}]", question=repr(name))
        for pos in range(count):
            ok, fb, pixel = call(
                "tools.Geometry.normalized_to_pixel",
                coords=f"{located}[{pos}]",
                width=size[1],
                height=size[0],
            )
            if ok:
                _, _, var = call(
                    "tools.SAM3.segment_video_by_points",
                    images="InputImages",
                    points=[pixel],
                    label=repr(name),
                    prompt_frame_idx=pos,
                )
                return var
        return located


def _printed_float(feedback: str) -> float | None:
    m = re.search(r"result_\d+: (?:float|float64|int) = (\S+)", feedback)
    return parse_number(m.group(1)) if m else None


def _printed_str(feedback: str) -> str:
    """The string a tool call returned: the echoed repr on the line after ``Output:`` (whole; the variable
    summary below it is cut to a few dozen characters), else that summary."""
    m = re.search(r"^Output:\n(.+)$", feedback, re.M) or re.search(r"result_\d+: str = (.+)", feedback)
    return m.group(1).strip().strip("'\"") if m else ""


def reference_model(interface: str, spec: object) -> Scripted:
    """``Scripted(ReferencePolicy(interface, eyes=..., images=...))`` for the sample ``spec`` (a
    :class:`~.session.SessionSpec`): the eyes are the sample's ``vlm`` over its ``InputImages``."""
    from neurips26.spatialclaw.session import SessionSpec, build_namespace

    if not isinstance(spec, SessionSpec):
        raise TypeError(f"spec must be a SessionSpec; got {type(spec).__name__}")
    namespace = build_namespace(spec)
    policy = ReferencePolicy(interface, eyes=namespace["vlm"], images=namespace["InputImages"])
    return Scripted(policy, model=f"reference-{interface}")


__all__ = [
    "MERGE_M",
    "ParsedQuestion",
    "ReferencePolicy",
    "canonical_name",
    "map_to_option",
    "parse_question",
    "reference_model",
    "split_user_message",
]
