from geneb.errors import GenebError, UnknownNameError, unknown_name


def test_unknown_name_lists_valid_and_suggests():
    err = unknown_name("task", "gue_mous_0", ["gue_mouse_0", "gue_tf_0"])
    assert isinstance(err, UnknownNameError)
    assert isinstance(err, GenebError) and isinstance(err, ValueError)
    msg = str(err)
    assert "Did you mean 'gue_mouse_0'" in msg
    assert "gue_tf_0" in msg
