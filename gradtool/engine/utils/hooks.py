"""torch.utils.hooks.RemovableHandle: the handle torch's hook registries return, keyed by a
running id in the registry's dict (held weakly, as torch's), removed by remove() or at the
end of a with block."""
import weakref


class RemovableHandle:
    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extras = [] if extra_dict is None else (
            extra_dict if isinstance(extra_dict, list) else [extra_dict])
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self):
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            hooks = ref()
            if hooks is not None and self.id in hooks:
                del hooks[self.id]

    def __enter__(self):
        return self

    def __exit__(self, type, value, tb):
        self.remove()


__all__ = ["RemovableHandle"]


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
